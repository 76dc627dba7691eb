package handlers

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEveryRouteIsChecked: the check comes with Route, so a function
// registered later (operationResults) is covered without doing anything;
// invocations of trigger functions are not touched.
func TestEveryRouteIsChecked(t *testing.T) {
	const app = "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"
	s := New(Config{Auth: Auth{Mode: AuthRequired, AppIDs: []string{app}}}, nil)
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
			req.Header.Set(HeaderClientPrincipal, tc.principal)
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
