package events

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// HTTPRequest is an HTTP trigger's request as a host that does not
// forward it renders it into Data.<binding>. hcpops's own host.json
// forwards (enableForwardingHttpRequest), and its HTTP functions have
// exactly the one httpTrigger and the one http output forwarding needs, so
// the host never sends these to the handler; the local Functions host
// still writes them for an app that turns forwarding off.
type HTTPRequest struct {
	URL        string `json:"Url"`
	Method     string
	Query      Query
	Headers    Headers
	Params     map[string]string
	Identities []json.RawMessage
	// Body is present only when the request has content.
	Body string `json:",omitempty"`
}

// Query is the request's query parameters. Old hosts sent the string "{}"
// (and nothing else) in its place, which reads as none.
type Query map[string]string

// UnmarshalJSON takes an object of strings, or the old hosts' string.
func (q *Query) UnmarshalJSON(b []byte) error {
	if Kind(b) == "string" {
		*q = Query{}
		return nil
	}
	return json.Unmarshal(b, (*map[string]string)(q))
}

// Headers keep every spelling and value the host sent: an array of
// strings per name from current hosts, a string from older ones.
type Headers map[string][]string

// UnmarshalJSON takes either form of each value.
func (h *Headers) UnmarshalJSON(b []byte) error {
	var wire map[string]json.RawMessage
	if err := json.Unmarshal(b, &wire); err != nil {
		return err
	}
	out := make(Headers, len(wire))
	for k, v := range wire {
		var one string
		if json.Unmarshal(v, &one) == nil {
			out[k] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(v, &many); err != nil {
			return fmt.Errorf("header %q is %s; want a string or an array of strings", k, Describe(v))
		}
		out[k] = many
	}
	*h = out
	return nil
}

// Metadata is what the host puts beside the request in Metadata: the
// query, the headers (each joined with ",") and each route value, every
// one passed through JsonConvert once more, so objects arrive as JSON text
// and strings gain a layer of quotes.
func (r HTTPRequest) Metadata() map[string]json.RawMessage {
	flat := make(map[string]string, len(r.Headers))
	for k, v := range r.Headers {
		flat[k] = strings.Join(v, ",")
	}
	twice := func(v any) json.RawMessage {
		once, _ := json.Marshal(v) // maps of strings and strings always encode
		raw, _ := json.Marshal(string(once))
		return raw
	}
	meta := map[string]json.RawMessage{"Query": twice(r.Query), "Headers": twice(flat)}
	for k, v := range r.Params {
		meta[k] = twice(v)
	}
	return meta
}

// HTTPResponse is the value of an http output binding: what the host
// answers the caller.
type HTTPResponse struct {
	StatusCode int
	Headers    http.Header
	Body       []byte
}

// DecodeHTTPResponse reads an http output binding as the host does:
// members StatusCode (or Status), Headers and Body matched
// case-insensitively, a status as a number or a numeric string, a body as
// a string or any JSON value. No value is an empty 200.
func DecodeHTTPResponse(raw json.RawMessage) (HTTPResponse, error) {
	res := HTTPResponse{StatusCode: http.StatusOK, Headers: http.Header{}}
	if Kind(raw) == "" || Kind(raw) == "null" {
		return res, nil
	}
	var wire struct {
		StatusCode json.RawMessage
		Status     json.RawMessage
		Headers    map[string]json.RawMessage
		Body       json.RawMessage
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		//nolint:staticcheck // ST1005: the Functions host's own message, word for word
		return HTTPResponse{}, fmt.Errorf("Failed while trying to Deserialize to httpOutputBindingResponse: %w", err)
	}
	for _, s := range []json.RawMessage{wire.StatusCode, wire.Status} {
		if n, err := strconv.Atoi(strings.Trim(string(s), `"`)); len(s) > 0 && err == nil && n >= 100 && n <= 999 {
			res.StatusCode = n
			break
		}
	}
	for k, v := range wire.Headers {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		res.Headers.Set(k, s)
	}
	var s string
	switch {
	case Kind(wire.Body) == "" || Kind(wire.Body) == "null":
	case json.Unmarshal(wire.Body, &s) == nil:
		res.Body = []byte(s)
	default:
		res.Body = wire.Body
	}
	return res, nil
}
