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
	for layer := 0; ; layer++ {
		switch handlers.JSONKind(cur) {
		case "array":
			return decodeArray(field, cur)
		case "string":
			if layer == maxStringLayers {
				return nil, handlers.BadInput("%s is wrapped in more than %d layers of JSON strings", field, maxStringLayers)
			}
			var s string
			if err := json.Unmarshal(cur, &s); err != nil {
				return nil, handlers.BadInput("%s is not a valid JSON string: %v", field, err)
			}
			if !json.Valid([]byte(s)) {
				return nil, handlers.BadInput("%s is a string whose content is not JSON: %q", field, preview(s))
			}
			cur = json.RawMessage(s)
		case "":
			return nil, handlers.BadInput("%s is empty; want an array of documents", field)
		default:
			return nil, handlers.BadInput("%s is %s; want an array of documents (or a JSON string holding one)", field, handlers.DescribeJSON(cur))
		}
	}
}

func decodeArray(field string, raw json.RawMessage) ([]json.RawMessage, error) {
	var docs []json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, handlers.BadInput("%s: %v", field, err)
	}
	for i, d := range docs {
		if handlers.JSONKind(d) != "object" {
			return nil, handlers.BadInput("%s[%d] is %s, not a JSON object", field, i, handlers.DescribeJSON(d))
		}
	}
	return docs, nil
}

// preview keeps error messages short when the host sends a large bad value.
func preview(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
