package ocm

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestLogFollowsDebugLevel: the request log is written at debug
// only; with debug off the wrapper still passes the request and response
// through untouched.
func TestRequestLogFollowsDebugLevel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		level  slog.Level
		logged bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, false},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))
			rt := logRequests(l)(srv.Client().Transport)
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTeapot {
				t.Errorf("status %d, want %d", resp.StatusCode, http.StatusTeapot)
			}
			got := buf.String()
			if logged := strings.Contains(got, "clusters service request") && strings.Contains(got, "path=/api/x"); logged != tc.logged {
				t.Errorf("at %s: logged %v, want %v: %q", tc.level, logged, tc.logged, got)
			}
		})
	}
}
