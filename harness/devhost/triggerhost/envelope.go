package triggerhost

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/hcpops/hcpops/events"
)

// maxRequestBody bounds a client body put into an invocation envelope.
const maxRequestBody = 16 << 20

// serveEnvelope runs an HTTP function without forwarding: the request
// becomes Data.<trigger> (events.HTTPRequest), route values and the query
// also go into Metadata, and the client gets what the function put in its
// http output binding.
func (h *Host) serveEnvelope(w http.ResponseWriter, r *http.Request, rt route, params map[string]string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := events.HTTPRequest{
		URL: "http://" + r.Host + r.URL.RequestURI(), Method: r.Method,
		Query: events.Query{}, Headers: events.Headers{"Host": {r.Host}}, Params: params, Identities: []json.RawMessage{},
		Body: string(body),
	}
	for k, v := range r.URL.Query() {
		req.Query[k] = strings.Join(v, ",")
	}
	for k, v := range r.Header {
		req.Headers[k] = v
	}
	raw, _ := json.Marshal(req) // strings and maps of strings: cannot fail
	res, err := h.invoker.Invoke(r.Context(), rt.function, map[string]json.RawMessage{rt.trigger: raw}, req.Metadata())
	if err != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelError, "HTTP function failed", slog.String("function", rt.function), slog.Any("error", err))
		http.Error(w, "function "+rt.function+" failed", http.StatusInternalServerError)
		return
	}
	out := res.Outputs[rt.output]
	if rt.output == "$return" {
		out = res.ReturnValue
	}
	resp, err := events.DecodeHTTPResponse(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for k, v := range resp.Headers {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(resp.Body)
}
