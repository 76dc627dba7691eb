package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/logging"
)

func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server, *logBuffer) {
	t.Helper()
	logger, logs := newTestLogger()
	s := New(cfg, logger)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts, logs
}

func TestHealth(t *testing.T) {
	s, ts, _ := newTestServer(t, Config{})
	rec := &recorder{}
	if err := s.Handle("pollOperations", rec.invoke); err != nil {
		t.Fatal(err)
	}
	resp := do(t, ts, http.MethodGet, "/", nil, nil)
	if resp.status != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.status)
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var h struct {
		Status    string
		Functions []string
	}
	if err := json.Unmarshal(resp.raw, &h); err != nil {
		t.Fatal(err)
	}
	if h.Status != "ok" || len(h.Functions) != 1 || h.Functions[0] != "pollOperations" {
		t.Errorf("health body = %s", resp.raw)
	}
	if rec.count() != 0 {
		t.Error("health ping invoked a function")
	}
}

func TestInvokeDeliversEnvelope(t *testing.T) {
	s, ts, _ := newTestServer(t, Config{})
	rec := &recorder{res: Result{InvokeResponse: events.InvokeResponse{Logs: []string{"did 2 things"}, Outputs: map[string]json.RawMessage{"res": json.RawMessage(`{"statusCode":"200"}`)}, ReturnValue: json.RawMessage(`"done"`)}}}
	if err := s.Handle("dispatchOperations", rec.invoke); err != nil {
		t.Fatal(err)
	}
	body := `{"Data":{"documents":"\"[]\""},"Metadata":{"sys":{"MethodName":"dispatchOperations"}}}`
	resp := do(t, ts, http.MethodPost, "/dispatchOperations", strings.NewReader(body),
		http.Header{events.HeaderInvocationID: {"3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20"}, "X-Azure-Functions-HostVersion": {"4.1036.1.1"}})
	if resp.status != http.StatusOK {
		t.Fatalf("status = %d body %s", resp.status, resp.raw)
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	want := `{"Outputs":{"res":{"statusCode":"200"}},"Logs":["did 2 things"],"ReturnValue":"done"}`
	if string(resp.raw) != want {
		t.Errorf("body = %s\nwant  %s", resp.raw, want)
	}
	if rec.count() != 1 {
		t.Fatalf("calls = %d", rec.count())
	}
	inv := rec.calls[0]
	if inv.Function != "dispatchOperations" || inv.ID != "3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20" {
		t.Errorf("invocation = %q / %q", inv.Function, inv.ID)
	}
	if string(inv.Data["documents"]) != `"\"[]\""` {
		t.Errorf("Data.documents = %s", inv.Data["documents"])
	}
	if string(inv.Metadata["sys"]) != `{"MethodName":"dispatchOperations"}` {
		t.Errorf("Metadata.sys = %s", inv.Metadata["sys"])
	}
	if inv.Header.Get("X-Azure-Functions-HostVersion") != "4.1036.1.1" {
		t.Errorf("headers not passed: %v", inv.Header)
	}
}

func TestInvokeEmptyResultIsStillAnObject(t *testing.T) {
	s, ts, _ := newTestServer(t, Config{})
	rec := &recorder{}
	_ = s.Handle("f", rec.invoke)
	resp := post(t, ts, "/f", `{"Data":{}}`)
	if want := `{"Outputs":{},"Logs":[],"ReturnValue":null}`; string(resp.raw) != want {
		t.Errorf("body = %s, want %s", resp.raw, want)
	}
	if rec.calls[0].Metadata == nil {
		t.Error("absent Metadata should decode to an empty map")
	}
}

func TestInvokeErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantMsg    string
	}{
		{"bad input", events.Malformed("Data.documents[1] is a number, not a JSON object"), 400, "Data.documents[1] is a number"},
		{"wrapped bad input", fmt.Errorf("decoding: %w", events.Malformed("Data.timer is missing")), 400, "Data.timer is missing"},
		{"other error", errors.New("store unavailable"), 500, "store unavailable"},
		{"too large", &BodyTooLargeError{Limit: 10}, 413, "limit of 10 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ts, _ := newTestServer(t, Config{})
			rec := &recorder{res: Result{InvokeResponse: events.InvokeResponse{Logs: []string{"partial work"}}}, err: tt.err}
			_ = s.Handle("f", rec.invoke)
			resp := post(t, ts, "/f", `{"Data":{}}`)
			if resp.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d", resp.status, tt.wantStatus)
			}
			if ct := resp.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if !strings.Contains(resp.body.Error, tt.wantMsg) {
				t.Errorf("Error = %q, want it to contain %q", resp.body.Error, tt.wantMsg)
			}
			if len(resp.body.Logs) != 2 || resp.body.Logs[0] != "partial work" || !strings.Contains(resp.body.Logs[1], tt.wantMsg) {
				t.Errorf("Logs = %q", resp.body.Logs)
			}
		})
	}
}

// TestMalformedRequests: each is refused with a 4xx JSON body naming the
// problem, and the function is never called.
func TestMalformedRequests(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantMsg                  string
	}{
		{"empty body", "POST", "/f", "", 400, "body is empty"},
		{"not JSON", "POST", "/f", "Data=1", 400, "not valid JSON"},
		{"truncated JSON", "POST", "/f", `{"Data":{`, 400, "not valid JSON"},
		{"trailing garbage", "POST", "/f", `{"Data":{}} {}`, 400, "not valid JSON"},
		{"array body", "POST", "/f", `[{"Data":{}}]`, 400, "must be a JSON object"},
		{"string body", "POST", "/f", `"Data"`, 400, "got string"},
		{"missing Data", "POST", "/f", `{"Metadata":{}}`, 400, "no Data object"},
		{"Data null", "POST", "/f", `{"Data":null}`, 400, "got null"},
		{"Data string", "POST", "/f", `{"Data":"documents"}`, 400, "Data must be a JSON object"},
		{"Data array", "POST", "/f", `{"Data":[]}`, 400, "got array"},
		{"Metadata string", "POST", "/f", `{"Data":{},"Metadata":"sys"}`, 400, "Metadata must be a JSON object"},
		{"unknown function", "POST", "/nosuchFunction", `{"Data":{}}`, 404, `"nosuchFunction"`},
		{"GET on invocation path", "GET", "/f", "", 405, "invoked with POST"},
		{"PUT on invocation path", "PUT", "/f", `{"Data":{}}`, 405, "not PUT"},
		{"POST on health", "POST", "/", `{"Data":{}}`, 405, "POST is not allowed"},
		{"deep unknown path", "POST", "/a/b/c", `{"Data":{}}`, 404, "/a/b/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ts, _ := newTestServer(t, Config{})
			rec := &recorder{}
			_ = s.Handle("f", rec.invoke)
			resp := do(t, ts, tt.method, tt.path, strings.NewReader(tt.body), nil)
			if resp.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d (body %s)", resp.status, tt.wantStatus, resp.raw)
			}
			if ct := resp.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if !strings.Contains(resp.body.Error, tt.wantMsg) {
				t.Errorf("Error = %q, want it to contain %q", resp.body.Error, tt.wantMsg)
			}
			if len(resp.body.Logs) == 0 || resp.body.Logs[len(resp.body.Logs)-1] != resp.body.Error {
				t.Errorf("Logs = %q should end with the error", resp.body.Logs)
			}
			if rec.count() != 0 {
				t.Errorf("function was called %d times", rec.count())
			}
		})
	}
}

func TestForwardedRoutes(t *testing.T) {
	s, ts, logs := newTestServer(t, Config{})
	var gotID, gotParam string
	var fnLine bytes.Buffer
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID = logging.InvocationID(r.Context())
		slog.New(logging.Handler(slog.NewJSONHandler(&fnLine, nil))).InfoContext(r.Context(), "in the route")
		gotParam = r.PathValue("id")
		if gotParam == "" {
			gotParam = chiParam(r, "id")
		}
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "raw "+gotParam)
	})
	if err := s.Route("things", http.MethodGet, "/things/{id}", h); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/things/42", "/api/things/42"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.Header.Set(events.HeaderInvocationID, "fwd-1")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot || string(body) != "raw 42" {
			t.Errorf("%s: %d %q; the forwarded response must pass through untouched", path, resp.StatusCode, body)
		}
		if gotID != "fwd-1" || gotParam != "42" || !strings.Contains(fnLine.String(), `"function":"things"`) {
			t.Errorf("%s: handler saw id=%q param=%q, logged %s", path, gotID, gotParam, fnLine.String())
		}
		fnLine.Reset()
	}
	resp := do(t, ts, http.MethodPost, "/things/42", nil, nil)
	if resp.status != http.StatusMethodNotAllowed || resp.body.Error == "" {
		t.Errorf("POST on a GET route: %d %s", resp.status, resp.raw)
	}
	ts.Close()
	var n int
	for _, l := range logs.lines(t) {
		if l["msg"] == "request" && l[logging.AttrFunction] == "things" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("access log lines for forwarded function: %d, want 2", n)
	}
	var names struct{ Functions []string }
	s2 := New(Config{}, nil)
	_ = s2.Route("things", http.MethodGet, "/things/{id}", h)
	rr := httptest.NewRecorder()
	s2.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/", nil))
	_ = json.Unmarshal(rr.Body.Bytes(), &names)
	if len(names.Functions) != 1 || names.Functions[0] != "things" {
		t.Errorf("health lists %v", names.Functions)
	}
}

func TestRegistrationErrors(t *testing.T) {
	s := New(Config{}, nil)
	noop := (&recorder{}).invoke
	if err := s.Handle("f", noop); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"duplicate", s.Handle("f", noop), `"f" is already registered`},
		{"empty name", s.Handle("", noop), `function name ""`},
		{"slash", s.Handle("a/b", noop), `"a/b"`},
		{"nil handler", s.Handle("g", nil), "nil handler"},
		{"relative route", s.Route("r", "GET", "things", http.NotFoundHandler()), `"things"`},
		{"bad chi pattern", s.Route("r", "GET", "/x/{a}/{a}", http.NotFoundHandler()), `"/x/{a}/{a}"`},
		{"nil route handler", s.Route("r", "GET", "/x", nil), "nil handler"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %s", tt.name, tt.err, tt.want)
		}
	}
}

// TestRouteAfterServingIsRefused: the router never changes under a request
// it is routing; a route registered too late is a wiring error, not a race.
func TestRouteAfterServingIsRefused(t *testing.T) {
	s := New(Config{}, nil)
	h := http.NotFoundHandler()
	if err := s.Route("early", http.MethodGet, "/early", h); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/early", nil))
		}()
	}
	wg.Wait()
	err := s.Route("late", http.MethodGet, "/late", h)
	if err == nil || !strings.Contains(err.Error(), "already serving") || !strings.Contains(err.Error(), `"/late"`) {
		t.Fatalf("Route after serving: %v, want it refused naming the route", err)
	}
	rr := httptest.NewRecorder()
	s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/late", nil))
	if rr.Code != http.StatusNotFound {
		t.Errorf("refused route answered %d", rr.Code)
	}
}
