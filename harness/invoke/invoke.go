// Package invoke calls the custom handler as the Functions host does: an
// invocation posted to a test server (Post), or a handler reached in
// memory through an http.RoundTripper (InMemory).
package invoke

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Reply is a custom handler's answer to an invocation, in the fields the
// Functions host reads: the HTTP output binding (res), Logs and Error.
type Reply struct {
	Status  int `json:"-"`
	Outputs struct {
		Res struct {
			StatusCode string            `json:"statusCode"`
			Headers    map[string]string `json:"headers"`
			Body       string            `json:"body"`
		} `json:"res"`
	}
	Logs  []string
	Error string
}

// Post posts an invocation envelope to function on ts, as the
// Functions host does, and decodes the reply. The host parses every reply as
// JSON whatever the status, so a reply that is not JSON fails the test.
// hdr adds request headers (the host's invocation id); nil adds none.
func Post(t testing.TB, ts *httptest.Server, function string, body []byte, hdr http.Header) Reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/"+function, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var r Reply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("reply is not JSON: %q", raw)
	}
	r.Status = resp.StatusCode
	return r
}
