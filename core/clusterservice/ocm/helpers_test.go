package ocm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/simulator/simtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// minuteDurations makes every phase one minute long.
func minuteDurations(t testing.TB) simulator.Durations {
	d := simulator.DefaultDurations()
	for _, n := range d.Names() {
		if err := d.Set(n, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Set("credential_expiry", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	return d
}

// recorder keeps slog records for assertions.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// find returns the messages at level that contain substr.
func (r *recorder) find(level slog.Level, substr string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		if rec.Level == level && strings.Contains(rec.Message, substr) {
			out = append(out, rec.Message)
		}
	}
	return out
}

type env struct {
	sim    *simulator.Simulator
	clock  *testsupport.Clock
	url    string
	client *Client
	log    *recorder
	ctx    context.Context
}

// newEnv starts a simulator on 127.0.0.1 and an ocm client against it,
// with millisecond retry intervals so fault tests stay fast.
func newEnv(t testing.TB, cfg Config, opts ...simulator.Option) *env {
	t.Helper()
	clk := testsupport.NewClock(testsupport.Epoch())
	sim, url := simtest.Start(t, append([]simulator.Option{simulator.WithClock(clk),
		simulator.WithDurations(minuteDurations(t))}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	cfg.URL = url
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = time.Millisecond
	}
	client, err := New(ctx, cfg, slog.New(rec))
	if err != nil {
		cancel()
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		_ = client.Close()
		cancel()
	})
	return &env{sim: sim, clock: clk, url: url, client: client, log: rec, ctx: context.Background()}
}

func defaultConfig() Config {
	return Config{RetryLimit: 2, Timeout: 5 * time.Second}
}

// clusterID makes a contract-shaped ID (32 characters of [0-9a-v]).
func clusterID(n int) string { return fmt.Sprintf("%032d", n) }

func clusterSpec(n int) cs.ClusterSpec {
	return cs.ClusterSpec{
		ID:           clusterID(n),
		Name:         fmt.Sprintf("cluster-%d", n),
		Region:       "westus3",
		VersionID:    "openshift-v4.19.0",
		ChannelGroup: "stable",
		Azure: cs.AzureRef{
			SubscriptionID:           "11111111-2222-3333-4444-555555555555",
			ResourceGroupName:        "rg-dev",
			ResourceName:             fmt.Sprintf("cluster-%d", n),
			TenantID:                 "66666666-7777-8888-9999-000000000000",
			ManagedResourceGroupName: fmt.Sprintf("rg-dev-%d-managed", n),
		},
	}
}

// readyCluster creates cluster n and advances the clock until it is ready.
func (e *env) readyCluster(t *testing.T, n int) string {
	t.Helper()
	c, err := e.client.PostCluster(e.ctx, clusterSpec(n))
	if err != nil {
		t.Fatalf("PostCluster: %v", err)
	}
	e.clock.Advance(3 * time.Minute)
	st, err := e.client.GetClusterStatus(e.ctx, c.Href)
	if err != nil || st.State != cs.ClusterStateReady {
		t.Fatalf("cluster %s after 3m: %+v, %v; want ready", c.Href, st, err)
	}
	return c.Href
}

// wantCSError checks err is a *clusterservice.Error with status and a
// reason containing each of reasons.
func wantCSError(t *testing.T, err error, status int, reasons ...string) {
	t.Helper()
	var e *cs.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *clusterservice.Error with status %d", err, err, status)
	}
	if e.Status != status || e.Code != fmt.Sprintf("CLUSTERS-MGMT-%d", status) {
		t.Fatalf("CS error = %+v, want status %d and code CLUSTERS-MGMT-%d", e, status, status)
	}
	for _, r := range reasons {
		if !strings.Contains(e.Reason, r) {
			t.Errorf("reason %q does not contain %q", e.Reason, r)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
