package ocm

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

type invocationKey struct{}

func invocationOf(ctx context.Context) string { s, _ := ctx.Value(invocationKey{}).(string); return s }

// TestObserveLogsAndRecords: the transport's one observer logs each
// request at debug only, records each CS request (a token request is none)
// in the invocation it was made for, and passes request and response
// through untouched either way.
func TestObserveLogsAndRecords(t *testing.T) {
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
			rec := cs.NewRecorder(nil, invocationOf)
			ctx := context.WithValue(context.Background(), invocationKey{}, "inv-1")
			done := rec.Count(ctx)
			rt := observe(l, rec)(srv.Client().Transport)
			for _, path := range []string{"/api/x", "/auth/realms/redhat-external/protocol/openid-connect/token"} {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
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
			}
			got := buf.String()
			if logged := strings.Contains(got, "clusters service request") && strings.Contains(got, "path=/api/x"); logged != tc.logged {
				t.Errorf("at %s: logged %v, want %v: %q", tc.level, logged, tc.logged, got)
			}
			if s := done(); s.Count != 1 || s.Errors != 1 {
				t.Errorf("recorded %+v, want the one CS request, a 418 refusal", s)
			}
			if !rec.WorkedSince(time.Time{}) {
				t.Error("a 418 refusal is no evidence that CS works")
			}
		})
	}
}
