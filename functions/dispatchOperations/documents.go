package dispatchoperations

import (
	"encoding/json"

	"github.com/hcpops/hcpops/handlers"
)

// maxStringLayers is how deep the array may be wrapped in JSON strings. The
// host sends two layers (the trigger hands it a string, which it serializes
// once more); other senders (a local host, curl, a fixed host) send one or
// none. Anything deeper is not something a host produces.
const maxStringLayers = 2

// DecodeDocuments turns the raw Data.documents value into one raw JSON
// object per document, accepting the double-encoded string the host sends,
// a single-encoded string, or a plain array. Documents are passed on byte
// for byte: date strings the host rewrote are the engine's concern.
func DecodeDocuments(raw json.RawMessage) ([]json.RawMessage, error) {
	const field = "Data." + BindingName
	cur := raw
	// Unmarshal validates as it decodes, so no layer is validated on its
	// own: a batch is large and each pass over it costs.
	notJSON := func() error {
		return handlers.BadInput("%s is a string whose content is not JSON: %q", field, handlers.Preview(string(cur)))
	}
	for layer := 0; ; layer++ {
		switch handlers.JSONKind(cur) {
		case "array":
			var docs []json.RawMessage
			if err := json.Unmarshal(cur, &docs); err != nil {
				if layer > 0 {
					return nil, notJSON()
				}
				return nil, handlers.BadInput("%s: %v", field, err)
			}
			for i, d := range docs {
				if handlers.JSONKind(d) != "object" {
					return nil, handlers.BadInput("%s[%d] is %s, not a JSON object", field, i, handlers.DescribeJSON(d))
				}
			}
			return docs, nil
		case "string":
			if layer == maxStringLayers {
				return nil, handlers.BadInput("%s is wrapped in more than %d layers of JSON strings", field, maxStringLayers)
			}
			var s string
			if err := json.Unmarshal(cur, &s); err != nil {
				if layer > 0 {
					return nil, notJSON()
				}
				return nil, handlers.BadInput("%s is not a valid JSON string: %v", field, err)
			}
			cur = json.RawMessage(s)
		default:
			if layer > 0 && !json.Valid(cur) {
				return nil, notJSON()
			}
			if len(cur) == 0 {
				return nil, handlers.BadInput("%s is empty; want an array of documents", field)
			}
			return nil, handlers.BadInput("%s is %s; want an array of documents (or a JSON string holding one)", field, handlers.DescribeJSON(cur))
		}
	}
}
