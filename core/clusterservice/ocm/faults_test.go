package ocm

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

const statusPattern = cs.ClustersPath + "/{id}/status"

// TestRetriesWithinBound: the SDK retries what is safe to retry, at most
// RetryLimit times, and the ledger shows exactly what reached CS.
func TestRetriesWithinBound(t *testing.T) {
	cases := []struct {
		name       string
		method     string // the call under test
		failures   int
		status     int
		wantStatus int // 0: the call succeeds
		requests   int // requests counted for the call's route
	}{
		{"GET 500 twice then OK", "GET", 2, 500, 0, 3},
		{"GET 500 beyond the bound", "GET", 3, 500, 500, 3},
		{"GET 429 beyond the bound", "GET", 5, 429, 429, 3},
		{"POST 500 is not replayed", "POST", 1, 500, 500, 1},
		{"POST 503 is replayed safely", "POST", 1, 503, 0, 2},
		{"DELETE 429 beyond the bound", "DELETE", 3, 429, 429, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, defaultConfig())
			c, err := e.client.PostCluster(e.ctx, clusterSpec(1))
			if err != nil {
				t.Fatal(err)
			}
			e.sim.ResetLedger()
			if err := e.sim.FailNext(tc.failures, tc.status); err != nil {
				t.Fatal(err)
			}
			var pattern string
			switch tc.method {
			case "GET":
				pattern = statusPattern
				_, err = e.client.GetClusterStatus(e.ctx, c.Href)
			case "POST":
				pattern = cs.ClustersPath
				_, err = e.client.PostCluster(e.ctx, clusterSpec(2))
			case "DELETE":
				pattern = cs.ClustersPath + "/{id}"
				err = e.client.DeleteCluster(e.ctx, c.Href)
			}
			if tc.wantStatus == 0 && err != nil {
				t.Fatalf("call failed: %v", err)
			}
			if tc.wantStatus != 0 {
				wantCSError(t, err, tc.wantStatus, "Simulated fault")
				if c := cs.Classify(err); c != cs.Failed && c != cs.Unavailable {
					t.Errorf("%d classified %s, want a failed call or CS unavailable", tc.wantStatus, c)
				}
			}
			if n := e.sim.Ledger().Count(tc.method, pattern); n != tc.requests {
				t.Errorf("%s requests = %d, want %d", tc.method, n, tc.requests)
			}
			if tc.method == "POST" {
				// However the POST fared, at most one cluster 2 exists.
				list, err := e.client.ListClusters(e.ctx, "azure.resource_name = 'cluster-2'")
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 1, false: 0}[tc.wantStatus == 0]; len(list) != want {
					t.Errorf("clusters named cluster-2 = %d, want %d", len(list), want)
				}
			}
		})
	}
}

func TestNoRetriesWhenLimitIsZero(t *testing.T) {
	e := newEnv(t, Config{RetryLimit: 0})
	if err := e.sim.FailNext(1, 503); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.GetClusterStatus(e.ctx, cs.ClusterHref(clusterID(1)))
	wantCSError(t, err, 503)
	if n := e.sim.Ledger().Count("GET", statusPattern); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// TestHungRequestCutByContext: a request CS never answers ends at the
// sooner of the caller's deadline and the configured timeout, is not
// retried, and counts as retryable. The "timeout before a later caller
// deadline" case is the poll tick's: its deadline is minutes away.
func TestHungRequestCutByContext(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		callCtx func() (context.Context, context.CancelFunc)
	}{
		{"caller deadline", Config{RetryLimit: 2, Timeout: time.Minute}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}},
		{"default timeout", Config{RetryLimit: 2, Timeout: 100 * time.Millisecond}, func() (context.Context, context.CancelFunc) {
			return context.Background(), func() {}
		}},
		{"timeout before a later caller deadline", Config{RetryLimit: 2, Timeout: 100 * time.Millisecond}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Second)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg)
			if err := e.sim.SetFaults(simulator.Faults{HangRate: 1}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := tc.callCtx()
			defer cancel()
			start := time.Now()
			_, err := e.client.GetClusterStatus(ctx, cs.ClusterHref(clusterID(1)))
			elapsed := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) || cs.Classify(err) != cs.Failed {
				t.Fatalf("err = %v, want a failed call's deadline error", err)
			}
			if elapsed < 90*time.Millisecond || elapsed > 10*time.Second {
				t.Errorf("call took %s, want about 100ms", elapsed)
			}
			l := e.sim.Ledger()
			if l.Count("GET", statusPattern) != 1 || l.Faults["GET "+statusPattern] != 1 {
				t.Errorf("ledger = %+v, want one hung request", l)
			}
		})
	}
}

func TestLatencyAgainstDeadline(t *testing.T) {
	e := newEnv(t, defaultConfig())
	if err := e.sim.SetLatency(simulator.Latency{Fixed: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.client.GetClusterStatus(ctx, cs.ClusterHref(clusterID(1))); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
}

// TestSDKLogsReachSlog: the SDK's retry warnings and the per-attempt
// request log go to the injected slog logger.
func TestSDKLogsReachSlog(t *testing.T) {
	e := newEnv(t, defaultConfig())
	if err := e.sim.FailNext(1, 503); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.GetClusterStatus(e.ctx, cs.ClusterHref(clusterID(1))); cs.Classify(err) != cs.Absent {
		t.Fatalf("err = %v, want 404 after one retried 503", err)
	}
	if w := e.log.find(slog.LevelWarn, "will try again"); len(w) != 1 {
		t.Errorf("SDK retry warnings = %q, want one", w)
	}
	if d := e.log.find(slog.LevelDebug, "clusters service request"); len(d) != 2 {
		t.Errorf("request log = %q, want one entry per attempt (2)", d)
	}
}

// TestNoRetryJitter: with NoRetryJitter the SDK's retries wait exactly
// RetryInterval, doubled, so a simulation replays them; without it they
// are spread around it.
func TestNoRetryJitter(t *testing.T) {
	gaps := func(t *testing.T, noJitter bool) []time.Duration {
		var at []time.Time
		synctest.Test(t, func(t *testing.T) {
			c, err := New(t.Context(), Config{URL: "http://cs.invalid", RetryLimit: 2, RetryInterval: time.Second,
				NoRetryJitter: noJitter, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					at = append(at, time.Now())
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, _ = c.GetClusterStatus(t.Context(), cs.ClusterHref(clusterID(1)))
		})
		var out []time.Duration
		for i := 1; i < len(at); i++ {
			out = append(out, at[i].Sub(at[i-1]))
		}
		return out
	}
	if got, want := gaps(t, true), []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("retries without jitter waited %v, want %v", got, want)
	}
	jittered := false
	for range 5 {
		g := gaps(t, false)
		jittered = jittered || len(g) != 2 || g[0] != time.Second || g[1] != 2*time.Second
	}
	if !jittered {
		t.Error("five calls with the SDK's jitter all waited exactly 1s and 2s")
	}
}
