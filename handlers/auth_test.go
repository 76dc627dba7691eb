package handlers

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/auth"
)

// TestEveryRouteIsChecked: the check comes with Route, so a function
// registered later (operationResults) is covered without doing anything;
// invocations of trigger functions are not touched.
func TestEveryRouteIsChecked(t *testing.T) {
	const app = "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"
	s := New(Config{Auth: auth.Policy{Mode: auth.Required, AppIDs: []string{app}}}, nil)
	reached := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })
	for _, fn := range []string{"operationStatus", "operationResults", "somethingNew"} {
		if err := s.Route(fn, http.MethodGet, "/"+fn+"/{id}", h); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Handle("pollOperations", func(ctx context.Context, inv Invocation) (Result, error) { reached++; return Result{}, nil })
	ts := httptest.NewServer(s)
	defer ts.Close()
	ok := base64.StdEncoding.EncodeToString([]byte(`{"claims":[{"typ":"appid","val":"` + app + `"}]}`))
	for _, fn := range []string{"operationStatus", "operationResults", "somethingNew"} {
		for _, tc := range []struct {
			principal string
			want      int
		}{{"", 401}, {ok, 200}} {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/"+fn+"/1", nil)
			req.Header.Set(auth.HeaderClientPrincipal, tc.principal)
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s with principal %q: %d, want %d", fn, tc.principal, resp.StatusCode, tc.want)
			}
		}
	}
	if resp := do(t, ts, http.MethodPost, "/pollOperations", strings.NewReader(`{"Data":{}}`), nil); resp.status != 200 {
		t.Errorf("trigger invocation: %d", resp.status)
	}
	if reached != 4 {
		t.Errorf("handlers reached %d times, want 4 (3 accepted GETs, 1 tick)", reached)
	}
}

// TestDuplicatePrincipalRefused: a request carrying more than one
// X-MS-CLIENT-PRINCIPAL, in any spelling, is refused 401 with a Warn line,
// whatever the copies say and in whatever order: no copy may decide alone.
func TestDuplicatePrincipalRefused(t *testing.T) {
	const app = "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"
	logger, logs := newTestLogger()
	s := New(Config{Auth: auth.Policy{Mode: auth.Required, AppIDs: []string{app}}}, logger)
	reached := 0
	if err := s.Route("operationStatus", http.MethodGet, "/status/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	allowed := base64.StdEncoding.EncodeToString([]byte(`{"claims":[{"typ":"appid","val":"` + app + `"}]}`))
	unlisted := base64.StdEncoding.EncodeToString([]byte(`{"claims":[{"typ":"appid","val":"00000000-0000-0000-0000-0000000000aa"}]}`))

	for _, pair := range [][2]string{{allowed, unlisted}, {unlisted, allowed}, {allowed, allowed}} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/status/1", nil)
		req.Header[auth.HeaderClientPrincipal] = []string{pair[0]}
		req.Header["x-ms-client-principal"] = []string{pair[1]} // another spelling, as a proxy may write it
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forwarded request with two principals: %d, want 401", resp.StatusCode)
		}
	}
	if reached != 0 {
		t.Errorf("a request with several principals reached its function %d times", reached)
	}
	warned := 0
	for _, l := range logs.lines(t) {
		if l["level"] == "WARN" && l["msg"] == MsgRequest && strings.Contains(fmt.Sprint(l["error"]), "more than one") {
			warned++
		}
	}
	if warned != 3 {
		t.Errorf("%d Warn request lines naming the duplicate principal, want 3 (one per request)", warned)
	}
}

// TestForwardedFunctionIsNotInvoked: the host forwards HTTP functions as
// they are, so POST /{function} of one is no invocation: a 404 that says
// why, and the route's handler never runs.
func TestForwardedFunctionIsNotInvoked(t *testing.T) {
	s := New(Config{}, nil)
	reached := 0
	if err := s.Route("operationStatus", http.MethodGet, "/status/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp := do(t, ts, http.MethodPost, "/operationStatus", strings.NewReader(`{"Data":{"req":{"Method":"GET"}}}`), nil)
	if resp.status != http.StatusNotFound || !strings.Contains(resp.body.Error, "enableForwardingHttpRequest") || reached != 0 {
		t.Errorf("POST /operationStatus: %d %q, reached %d; want a 404 naming forwarding", resp.status, resp.body.Error, reached)
	}
}
