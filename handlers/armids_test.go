package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestForwardedLineLevel: a forwarded route's 5xx is an Error line unless
// the route marked it as the answer it meant (an operation's own
// failure), which stays Info; either way the line has the request id the
// answer carries.
func TestForwardedLineLevel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		expected bool
		level    string
	}{{"fault", false, "ERROR"}, {"meant", true, "INFO"}} {
		t.Run(tc.name, func(t *testing.T) {
			logger, buf := newTestLogger()
			s := New(Config{}, logger)
			if err := s.Route("fn", http.MethodGet, "/r", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.expected {
					AnswerIsExpected(w)
				}
				w.WriteHeader(http.StatusInternalServerError)
			})); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/r", nil))
			id := rec.Header().Get(HeaderRequestID)
			var line map[string]any
			for _, l := range buf.lines(t) {
				if l["msg"] == MsgRequest {
					line = l
				}
			}
			if line["level"] != tc.level || id == "" || line[AttrRequestID] != id {
				t.Errorf("line %v, answer's request id %q; want %s with that id", line, id, tc.level)
			}
			if _, ok := line[AttrClientRequestID]; ok {
				t.Errorf("client_request_id on a line whose request had none: %v", line)
			}
		})
	}
}
