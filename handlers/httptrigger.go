package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// HTTPRequest is an HTTP trigger's request as the host renders it into
// Data.<binding> when forwarding is off.
type HTTPRequest struct {
	URL    string
	Method string
	// Headers keep every spelling and value the host sent.
	Headers map[string][]string
	Params  map[string]string
	Query   map[string]string
	// distrusted holds the (lower-cased) names of identity headers whose
	// value could not be read: Header reports them as a conflict.
	distrusted map[string]bool
}

// DecodeHTTPRequest reads Data.<binding>; field names it in errors. Each
// member may be missing or null; one of the wrong type is an input error,
// except a header named in identity: an unreadable identity is no
// identity, so Header reports it as a conflict and the caller sees nothing.
func DecodeHTTPRequest(field string, raw json.RawMessage, identity ...string) (HTTPRequest, error) {
	if raw == nil {
		return HTTPRequest{}, BadInput("%s is missing; want the host's HTTP request object", field)
	}
	if JSONKind(raw) != "object" {
		return HTTPRequest{}, BadInput("%s is %s; want the host's HTTP request object {Url, Method, Headers, Params...}", field, DescribeJSON(raw))
	}
	var wire map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wire); err != nil {
		return HTTPRequest{}, BadInput("%s: %v", field, err)
	}
	member := func(name string) json.RawMessage { // the host's casing varies
		for k, v := range wire {
			if strings.EqualFold(k, name) {
				return v
			}
		}
		return nil
	}
	var req HTTPRequest
	for _, f := range []struct {
		name string
		dst  *string
	}{{"Url", &req.URL}, {"Method", &req.Method}} {
		switch v := member(f.name); JSONKind(v) {
		case "", "null":
		case "string":
			_ = json.Unmarshal(v, f.dst) // valid: the envelope was parsed already
		default:
			return HTTPRequest{}, BadInput("%s.%s is %s; want a string", field, f.name, DescribeJSON(v))
		}
	}
	switch v := member("Headers"); JSONKind(v) {
	case "", "null":
	case "object":
		h, distrusted, err := decodeHeaders(v, identity)
		if err != nil {
			return HTTPRequest{}, BadInput("%s.Headers: %v", field, err)
		}
		req.Headers, req.distrusted = h, distrusted
	default:
		return HTTPRequest{}, BadInput("%s.Headers is %s; want an object of header names", field, DescribeJSON(v))
	}
	for _, f := range []struct {
		name string
		dst  *map[string]string
	}{{"Params", &req.Params}, {"Query", &req.Query}} {
		switch v := member(f.name); JSONKind(v) {
		case "", "null":
		case "object":
			if err := json.Unmarshal(v, f.dst); err != nil {
				return HTTPRequest{}, BadInput("%s.%s must map names to strings: %v", field, f.name, err)
			}
		case "string":
			if f.name != "Query" { // old hosts sent Query as the string "{}"
				return HTTPRequest{}, BadInput("%s.%s is %s; want an object", field, f.name, DescribeJSON(v))
			}
		default:
			return HTTPRequest{}, BadInput("%s.%s is %s; want an object", field, f.name, DescribeJSON(v))
		}
	}
	return req, nil
}

// decodeHeaders accepts each value as an array of strings (current hosts)
// or a string (older ones); an unreadable identity header is distrusted.
func decodeHeaders(raw json.RawMessage, identity []string) (map[string][]string, map[string]bool, error) {
	var wire map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, nil, err
	}
	var distrusted map[string]bool
	out := make(map[string][]string, len(wire))
	for k, v := range wire {
		var one string
		if json.Unmarshal(v, &one) == nil {
			out[k] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(v, &many); err != nil {
			if slices.ContainsFunc(identity, func(n string) bool { return strings.EqualFold(n, k) }) {
				if distrusted == nil {
					distrusted = map[string]bool{}
				}
				distrusted[strings.ToLower(k)] = true
				continue
			}
			return nil, nil, BadInput("header %q is %s; want a string or an array of strings", k, DescribeJSON(v))
		}
		out[k] = many
	}
	return out, distrusted, nil
}

// Header is the value of a header, matched case-insensitively. conflict
// reports spellings or repeats that disagree (values compare
// case-insensitively, as the IDs in ARM's headers do): the value is then
// "", and a caller deciding who is asking must not pick one.
func (r HTTPRequest) Header(name string) (value string, conflict bool) {
	if r.distrusted[strings.ToLower(name)] {
		return "", true
	}
	seen := false
	for k, vs := range r.Headers {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, v := range vs {
			if seen && !strings.EqualFold(v, value) {
				return "", true
			}
			value, seen = v, true
		}
	}
	return value, false
}

// QueryValue is a query parameter from Query, else from the URL.
func (r HTTPRequest) QueryValue(name string) string {
	if v, ok := r.Query[name]; ok {
		return v
	}
	if u, err := url.Parse(r.URL); err == nil {
		return u.Query().Get(name)
	}
	return ""
}

// HTTPResponse is Outputs.<binding> for the host: the caller's status,
// headers and body.
func HTTPResponse(status int, header http.Header, body []byte) map[string]any {
	res := map[string]any{"statusCode": strconv.Itoa(status), "body": string(body)}
	if len(header) > 0 {
		h := make(map[string]string, len(header))
		for k := range header {
			h[k] = header.Get(k)
		}
		res["headers"] = h
	}
	return res
}
