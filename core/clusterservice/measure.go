package clusterservice

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Calls counts the Clusters Service calls made for one piece of work (a
// poll tick, a change-feed batch) and how long they took: the numbers an
// SRE reads in its telemetry record. It lives in the context, so the
// lifecycle needs no knowledge of it, and concurrent invocations never mix
// their numbers. Safe for concurrent use.
type Calls struct {
	mu      sync.Mutex
	count   int
	errors  int
	samples []time.Duration
}

// maxSamples bounds the latencies kept for percentiles; a tick seldom makes
// more calls, and beyond it the percentiles describe the first ones.
const maxSamples = 8192

type callsKey struct{}

// WithCalls returns a context whose Clusters Service calls, made through a
// Measured client, are counted in the returned Calls.
func WithCalls(ctx context.Context) (context.Context, *Calls) {
	c := &Calls{}
	return context.WithValue(ctx, callsKey{}, c), c
}

func callsFrom(ctx context.Context) *Calls {
	c, _ := ctx.Value(callsKey{}).(*Calls)
	return c
}

// record counts one call. A 404 is an answer (delete completion relies on
// it), not an error.
func (c *Calls) record(d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	if Classify(err) != Absent && err != nil {
		c.errors++
	}
	if len(c.samples) < maxSamples {
		c.samples = append(c.samples, d)
	}
}

// CallSummary is what Calls counted.
type CallSummary struct {
	Count  int           // calls made
	Errors int           // calls that failed, 404s aside
	P50    time.Duration // median latency
	P99    time.Duration // 99th percentile latency
}

// Attrs is the summary as the cs_* keys of a function's telemetry record
// (docs/functions.md): one spelling for every function that reports calls.
func (s CallSummary) Attrs() []slog.Attr {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []slog.Attr{
		slog.Int("cs_calls", s.Count),
		slog.Int("cs_errors", s.Errors),
		slog.Float64("cs_p50_ms", ms(s.P50)),
		slog.Float64("cs_p99_ms", ms(s.P99)),
	}
}

// Summary reports the calls counted so far; a nil Calls counted none.
func (c *Calls) Summary() CallSummary {
	if c == nil {
		return CallSummary{}
	}
	c.mu.Lock()
	s := CallSummary{Count: c.count, Errors: c.errors}
	sorted := slices.Clone(c.samples)
	c.mu.Unlock()
	slices.Sort(sorted)
	s.P50, s.P99 = percentile(sorted, 50), percentile(sorted, 99)
	return s
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

// Measured returns c with every call counted in the Calls of its context
// (see WithCalls); calls whose context carries none cost one lookup.
// Whoever adds a method to Client adds its line here; a test fails until
// they do.
func Measured(c Client) Client {
	if _, ok := c.(measured); ok {
		return c
	}
	return measured{c}
}

type measured struct{ Client }

func measure[T any](ctx context.Context, call func() (T, error)) (v T, err error) {
	calls := callsFrom(ctx)
	if calls == nil {
		return call()
	}
	start := time.Now()
	defer func() { calls.record(time.Since(start), err) }()
	return call()
}

func measure0(ctx context.Context, call func() error) error {
	_, err := measure(ctx, func() (struct{}, error) { return struct{}{}, call() })
	return err
}

func (m measured) ListClusters(ctx context.Context, search string) ([]Cluster, error) {
	return measure(ctx, func() ([]Cluster, error) { return m.Client.ListClusters(ctx, search) })
}

func (m measured) PostCluster(ctx context.Context, spec ClusterSpec) (Cluster, error) {
	return measure(ctx, func() (Cluster, error) { return m.Client.PostCluster(ctx, spec) })
}

func (m measured) GetCluster(ctx context.Context, href string) (Cluster, error) {
	return measure(ctx, func() (Cluster, error) { return m.Client.GetCluster(ctx, href) })
}

func (m measured) GetClusterStatus(ctx context.Context, href string) (ClusterStatus, error) {
	return measure(ctx, func() (ClusterStatus, error) { return m.Client.GetClusterStatus(ctx, href) })
}

func (m measured) PatchCluster(ctx context.Context, href string, patch ClusterPatch) (Cluster, error) {
	return measure(ctx, func() (Cluster, error) { return m.Client.PatchCluster(ctx, href, patch) })
}

func (m measured) DeleteCluster(ctx context.Context, href string) error {
	return measure0(ctx, func() error { return m.Client.DeleteCluster(ctx, href) })
}

func (m measured) GetInflightChecks(ctx context.Context, clusterHref string) ([]InflightCheck, error) {
	return measure(ctx, func() ([]InflightCheck, error) { return m.Client.GetInflightChecks(ctx, clusterHref) })
}

func (m measured) PostNodePool(ctx context.Context, clusterHref string, spec NodePoolSpec) (NodePool, error) {
	return measure(ctx, func() (NodePool, error) { return m.Client.PostNodePool(ctx, clusterHref, spec) })
}

func (m measured) GetNodePool(ctx context.Context, href string) (NodePool, error) {
	return measure(ctx, func() (NodePool, error) { return m.Client.GetNodePool(ctx, href) })
}

func (m measured) GetNodePoolStatus(ctx context.Context, href string) (NodePoolStatus, error) {
	return measure(ctx, func() (NodePoolStatus, error) { return m.Client.GetNodePoolStatus(ctx, href) })
}

func (m measured) PatchNodePool(ctx context.Context, href string, patch NodePoolPatch) (NodePool, error) {
	return measure(ctx, func() (NodePool, error) { return m.Client.PatchNodePool(ctx, href, patch) })
}

func (m measured) DeleteNodePool(ctx context.Context, href string) error {
	return measure0(ctx, func() error { return m.Client.DeleteNodePool(ctx, href) })
}

func (m measured) PostExternalAuth(ctx context.Context, clusterHref string, spec ExternalAuthSpec) (ExternalAuth, error) {
	return measure(ctx, func() (ExternalAuth, error) { return m.Client.PostExternalAuth(ctx, clusterHref, spec) })
}

func (m measured) GetExternalAuth(ctx context.Context, href string) (ExternalAuth, error) {
	return measure(ctx, func() (ExternalAuth, error) { return m.Client.GetExternalAuth(ctx, href) })
}

func (m measured) PatchExternalAuth(ctx context.Context, href string, patch ExternalAuthSpec) (ExternalAuth, error) {
	return measure(ctx, func() (ExternalAuth, error) { return m.Client.PatchExternalAuth(ctx, href, patch) })
}

func (m measured) DeleteExternalAuth(ctx context.Context, href string) error {
	return measure0(ctx, func() error { return m.Client.DeleteExternalAuth(ctx, href) })
}

func (m measured) PostBreakGlassCredential(ctx context.Context, clusterHref string) (BreakGlassCredential, error) {
	return measure(ctx, func() (BreakGlassCredential, error) { return m.Client.PostBreakGlassCredential(ctx, clusterHref) })
}

func (m measured) GetBreakGlassCredential(ctx context.Context, href string) (BreakGlassCredential, error) {
	return measure(ctx, func() (BreakGlassCredential, error) { return m.Client.GetBreakGlassCredential(ctx, href) })
}

func (m measured) ListBreakGlassCredentials(ctx context.Context, clusterHref string) ([]BreakGlassCredential, error) {
	return measure(ctx, func() ([]BreakGlassCredential, error) { return m.Client.ListBreakGlassCredentials(ctx, clusterHref) })
}

func (m measured) DeleteBreakGlassCredentials(ctx context.Context, clusterHref string) error {
	return measure0(ctx, func() error { return m.Client.DeleteBreakGlassCredentials(ctx, clusterHref) })
}

func (m measured) ListClustersByHref(ctx context.Context, hrefs []string) (map[string]Cluster, error) {
	return measure(ctx, func() (map[string]Cluster, error) { return m.Client.ListClustersByHref(ctx, hrefs) })
}

func (m measured) ListNodePoolsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]NodePool, error) {
	return measure(ctx, func() (map[string]NodePool, error) { return m.Client.ListNodePoolsByHref(ctx, clusterHref, hrefs) })
}

func (m measured) ListExternalAuthsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]ExternalAuth, error) {
	return measure(ctx, func() (map[string]ExternalAuth, error) {
		return m.Client.ListExternalAuthsByHref(ctx, clusterHref, hrefs)
	})
}
