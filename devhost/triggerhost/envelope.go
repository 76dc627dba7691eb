package triggerhost

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// maxRequestBody bounds a client body put into an invocation envelope.
const maxRequestBody = 16 << 20

// serveEnvelope runs an HTTP function without forwarding: the request
// becomes Data.<trigger> ({Url, Method, Query, Headers, Params, Identities,
// Body}), route values and the query also go into Metadata, and the client
// gets what the function put in its http output binding.
func (h *Host) serveEnvelope(w http.ResponseWriter, r *http.Request, rt route, params map[string]string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		query[k] = strings.Join(v, ",")
	}
	headers, flat := map[string][]string{}, map[string]string{}
	for k, v := range r.Header {
		headers[k], flat[k] = v, strings.Join(v, ",")
	}
	headers["Host"], flat["Host"] = []string{r.Host}, r.Host
	req := map[string]any{
		"Url": "http://" + r.Host + r.URL.RequestURI(), "Method": r.Method,
		"Query": query, "Headers": headers, "Params": params, "Identities": []any{},
	}
	if len(body) > 0 {
		req["Body"] = string(body)
	}
	data := map[string]json.RawMessage{rt.trigger: mustJSON(req)}
	// The host passes binding data through JsonConvert once more: objects
	// become JSON text, strings gain quotes.
	meta := map[string]json.RawMessage{
		"Query":   mustJSON(string(mustJSON(query))),
		"Headers": mustJSON(string(mustJSON(flat))),
	}
	for k, v := range params {
		meta[k] = mustJSON(string(mustJSON(v)))
	}
	res, err := h.invoker.Invoke(r.Context(), rt.function, data, meta)
	if err != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelError, "HTTP function failed", slog.String("function", rt.function), slog.Any("error", err))
		http.Error(w, "function "+rt.function+" failed", http.StatusInternalServerError)
		return
	}
	out := res.Outputs[rt.output]
	if rt.output == "$return" {
		out = res.ReturnValue
	}
	writeOutputBinding(w, out)
}

// writeOutputBinding renders an http output binding value: an object with
// statusCode, headers and body, matched case-insensitively. No value is an
// empty 200.
func writeOutputBinding(w http.ResponseWriter, raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		w.WriteHeader(http.StatusOK)
		return
	}
	var res struct {
		StatusCode json.RawMessage
		Status     json.RawMessage
		Headers    map[string]any
		Body       json.RawMessage
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		http.Error(w, "Failed while trying to Deserialize to httpOutputBindingResponse: "+err.Error(), http.StatusInternalServerError)
		return
	}
	status := http.StatusOK
	for _, s := range []json.RawMessage{res.StatusCode, res.Status} {
		if len(s) == 0 {
			continue
		}
		if n, err := strconv.Atoi(strings.Trim(string(s), `"`)); err == nil && n >= 100 && n <= 999 {
			status = n
			break
		}
	}
	for k, v := range res.Headers {
		w.Header().Set(k, strings.Trim(string(mustJSON(v)), `"`))
	}
	var body []byte
	var s string
	switch {
	case len(res.Body) == 0 || string(res.Body) == "null":
	case json.Unmarshal(res.Body, &s) == nil:
		body = []byte(s)
	default:
		body = res.Body
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// mustJSON encodes values that cannot fail to encode: strings, maps of
// strings and values decoded from JSON.
func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}
