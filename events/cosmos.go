package events

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxStringLayers is how deep a change-feed batch may be wrapped in JSON
// strings. The host sends two layers (the trigger hands it a string, which
// it serializes once more); other senders (a local host, curl, a fixed
// host) send one or none. Anything deeper is not something a host produces.
const MaxStringLayers = 2

// DecodeDocuments turns a Cosmos DB trigger's binding value into one raw
// JSON object per document; field (Data.documents) names it in errors. It
// accepts the double-encoded string the host sends, a single-encoded
// string, or a plain array. Documents are passed on byte for byte: date
// strings the host rewrote are the reader's concern.
func DecodeDocuments(field string, raw json.RawMessage) ([]json.RawMessage, error) {
	cur := raw
	// Unmarshal validates as it decodes, so no layer is validated on its
	// own: a batch is large and each pass over it costs.
	notJSON := func() error {
		return Malformed("%s is a string whose content is not JSON: %q", field, Preview(string(cur)))
	}
	for layer := 0; ; layer++ {
		switch Kind(cur) {
		case "array":
			var docs []json.RawMessage
			if err := json.Unmarshal(cur, &docs); err != nil {
				if layer > 0 {
					return nil, notJSON()
				}
				return nil, Malformed("%s: %v", field, err)
			}
			for i, d := range docs {
				if Kind(d) != "object" {
					return nil, Malformed("%s[%d] is %s, not a JSON object", field, i, Describe(d))
				}
			}
			return docs, nil
		case "string":
			if layer == MaxStringLayers {
				return nil, Malformed("%s is wrapped in more than %d layers of JSON strings", field, MaxStringLayers)
			}
			var s string
			if err := json.Unmarshal(cur, &s); err != nil {
				if layer > 0 {
					return nil, notJSON()
				}
				return nil, Malformed("%s is not a valid JSON string: %v", field, err)
			}
			cur = json.RawMessage(s)
		default:
			if layer > 0 && !json.Valid(cur) {
				return nil, notJSON()
			}
			if len(cur) == 0 {
				return nil, Malformed("%s is empty; want an array of documents", field)
			}
			return nil, Malformed("%s is %s; want an array of documents (or a JSON string holding one)", field, Describe(cur))
		}
	}
}

// EncodeDocuments renders a batch the way the host hands it to a custom
// handler: the extension makes the documents one compact JSON array
// string, the host serializes that string again, and the envelope encodes
// the result as a JSON string value, so the binding's value is a string
// holding a string holding the array.
func EncodeDocuments(docs [][]byte) (json.RawMessage, error) {
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, d := range docs {
		if i > 0 {
			arr.WriteByte(',')
		}
		if err := json.Compact(&arr, d); err != nil {
			return nil, fmt.Errorf("change feed document %d is not JSON: %w", i, err)
		}
	}
	arr.WriteByte(']')
	inner, err := jsonString(arr.String())
	if err != nil {
		return nil, err
	}
	return jsonString(string(inner))
}

// jsonString encodes s as a JSON string without HTML escaping, as
// Newtonsoft writes it.
func jsonString(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding documents: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
