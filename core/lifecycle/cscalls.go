package lifecycle

import (
	"context"
	"errors"
	"sync"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// csCallError is a failed Clusters Service call with what an operator needs
// to find it: the call, the href it was about and how long it took. The
// tick logs it once per operation and backs the operation off; its
// message is the underlying error's, unchanged.
type csCallError struct {
	call    string
	href    string
	elapsed time.Duration
	err     error
}

func (e *csCallError) Error() string { return e.err.Error() }
func (e *csCallError) Unwrap() error { return e.err }

// csAttrs are the log attributes of the CS call behind err, if any.
func csAttrs(err error) []any {
	var ce *csCallError
	if !errors.As(err, &ce) {
		return nil
	}
	return []any{"cs_call", ce.call, "cluster_service_id", ce.href, "elapsed", ce.elapsed.String()}
}

// csCalls wraps the engine's CS client so that every failed call carries a
// csCallError, and every answer of a working CS is remembered in health.
// It lets the tick tell a CS fault (back off) from a store fault (retry
// next tick), and a change-feed batch tell one sick object from a sick
// CS, without each call site saying which is which.
type csCalls struct {
	next   cs.Client
	health *csHealth
}

var _ cs.Client = csCalls{}

// observe runs one call, wraps its error and tells h how it went.
func observe[T any](h *csHealth, call, href string, f func() (T, error)) (T, error) {
	start := time.Now()
	v, err := f()
	h.record(err)
	if err != nil {
		return v, &csCallError{call: call, href: href, elapsed: time.Since(start), err: err}
	}
	return v, nil
}

func observeErr(h *csHealth, call, href string, f func() error) error {
	_, err := observe(h, call, href, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

// csHealth is when Clusters Service last answered as a working service
// does: a success, or a refusal of the request itself (a 4xx other than
// 429). A timeout, garbage or a 5xx is no such evidence. It is shared by
// the batches and the ticks of one engine: any of them may show CS works.
type csHealth struct {
	clock func() time.Time

	mu   sync.Mutex
	last time.Time // zero: never
}

func (h *csHealth) record(err error) {
	if !cs.Classify(err).Working() {
		return
	}
	now := h.clock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if now.After(h.last) {
		h.last = now
	}
}

// answeredSince reports whether CS answered as a working service at or after t.
func (h *csHealth) answeredSince(t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.last.IsZero() && !h.last.Before(t)
}

func (c csCalls) ListClusters(ctx context.Context, search string) ([]cs.Cluster, error) {
	return observe(c.health, "ListClusters", cs.ClustersPath, func() ([]cs.Cluster, error) { return c.next.ListClusters(ctx, search) })
}

func (c csCalls) PostCluster(ctx context.Context, spec cs.ClusterSpec) (cs.Cluster, error) {
	return observe(c.health, "PostCluster", cs.ClusterHref(spec.ID), func() (cs.Cluster, error) { return c.next.PostCluster(ctx, spec) })
}

func (c csCalls) GetCluster(ctx context.Context, href string) (cs.Cluster, error) {
	return observe(c.health, "GetCluster", href, func() (cs.Cluster, error) { return c.next.GetCluster(ctx, href) })
}

func (c csCalls) GetClusterStatus(ctx context.Context, href string) (cs.ClusterStatus, error) {
	return observe(c.health, "GetClusterStatus", href, func() (cs.ClusterStatus, error) { return c.next.GetClusterStatus(ctx, href) })
}

func (c csCalls) PatchCluster(ctx context.Context, href string, patch cs.ClusterPatch) (cs.Cluster, error) {
	return observe(c.health, "PatchCluster", href, func() (cs.Cluster, error) { return c.next.PatchCluster(ctx, href, patch) })
}

func (c csCalls) DeleteCluster(ctx context.Context, href string) error {
	return observeErr(c.health, "DeleteCluster", href, func() error { return c.next.DeleteCluster(ctx, href) })
}

func (c csCalls) GetInflightChecks(ctx context.Context, clusterHref string) ([]cs.InflightCheck, error) {
	return observe(c.health, "GetInflightChecks", clusterHref, func() ([]cs.InflightCheck, error) {
		return c.next.GetInflightChecks(ctx, clusterHref)
	})
}

func (c csCalls) PostNodePool(ctx context.Context, clusterHref string, spec cs.NodePoolSpec) (cs.NodePool, error) {
	return observe(c.health, "PostNodePool", cs.NodePoolHref(clusterHref, spec.ID), func() (cs.NodePool, error) {
		return c.next.PostNodePool(ctx, clusterHref, spec)
	})
}

func (c csCalls) GetNodePool(ctx context.Context, href string) (cs.NodePool, error) {
	return observe(c.health, "GetNodePool", href, func() (cs.NodePool, error) { return c.next.GetNodePool(ctx, href) })
}

func (c csCalls) GetNodePoolStatus(ctx context.Context, href string) (cs.NodePoolStatus, error) {
	return observe(c.health, "GetNodePoolStatus", href, func() (cs.NodePoolStatus, error) { return c.next.GetNodePoolStatus(ctx, href) })
}

func (c csCalls) PatchNodePool(ctx context.Context, href string, patch cs.NodePoolPatch) (cs.NodePool, error) {
	return observe(c.health, "PatchNodePool", href, func() (cs.NodePool, error) { return c.next.PatchNodePool(ctx, href, patch) })
}

func (c csCalls) DeleteNodePool(ctx context.Context, href string) error {
	return observeErr(c.health, "DeleteNodePool", href, func() error { return c.next.DeleteNodePool(ctx, href) })
}

func (c csCalls) PostExternalAuth(ctx context.Context, clusterHref string, spec cs.ExternalAuthSpec) (cs.ExternalAuth, error) {
	return observe(c.health, "PostExternalAuth", cs.ExternalAuthHref(clusterHref, spec.ID), func() (cs.ExternalAuth, error) {
		return c.next.PostExternalAuth(ctx, clusterHref, spec)
	})
}

func (c csCalls) GetExternalAuth(ctx context.Context, href string) (cs.ExternalAuth, error) {
	return observe(c.health, "GetExternalAuth", href, func() (cs.ExternalAuth, error) { return c.next.GetExternalAuth(ctx, href) })
}

func (c csCalls) PatchExternalAuth(ctx context.Context, href string, patch cs.ExternalAuthSpec) (cs.ExternalAuth, error) {
	return observe(c.health, "PatchExternalAuth", href, func() (cs.ExternalAuth, error) { return c.next.PatchExternalAuth(ctx, href, patch) })
}

func (c csCalls) DeleteExternalAuth(ctx context.Context, href string) error {
	return observeErr(c.health, "DeleteExternalAuth", href, func() error { return c.next.DeleteExternalAuth(ctx, href) })
}

func (c csCalls) PostBreakGlassCredential(ctx context.Context, clusterHref string) (cs.BreakGlassCredential, error) {
	return observe(c.health, "PostBreakGlassCredential", clusterHref, func() (cs.BreakGlassCredential, error) {
		return c.next.PostBreakGlassCredential(ctx, clusterHref)
	})
}

func (c csCalls) GetBreakGlassCredential(ctx context.Context, href string) (cs.BreakGlassCredential, error) {
	return observe(c.health, "GetBreakGlassCredential", href, func() (cs.BreakGlassCredential, error) {
		return c.next.GetBreakGlassCredential(ctx, href)
	})
}

func (c csCalls) ListBreakGlassCredentials(ctx context.Context, clusterHref string) ([]cs.BreakGlassCredential, error) {
	return observe(c.health, "ListBreakGlassCredentials", clusterHref, func() ([]cs.BreakGlassCredential, error) {
		return c.next.ListBreakGlassCredentials(ctx, clusterHref)
	})
}

func (c csCalls) DeleteBreakGlassCredentials(ctx context.Context, clusterHref string) error {
	return observeErr(c.health, "DeleteBreakGlassCredentials", clusterHref, func() error {
		return c.next.DeleteBreakGlassCredentials(ctx, clusterHref)
	})
}

func (c csCalls) ListClustersByHref(ctx context.Context, hrefs []string) (map[string]cs.Cluster, error) {
	return observe(c.health, "ListClustersByHref", firstOf(hrefs), func() (map[string]cs.Cluster, error) {
		return c.next.ListClustersByHref(ctx, hrefs)
	})
}

func (c csCalls) ListNodePoolsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]cs.NodePool, error) {
	return observe(c.health, "ListNodePoolsByHref", clusterHref, func() (map[string]cs.NodePool, error) {
		return c.next.ListNodePoolsByHref(ctx, clusterHref, hrefs)
	})
}

func (c csCalls) ListExternalAuthsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]cs.ExternalAuth, error) {
	return observe(c.health, "ListExternalAuthsByHref", clusterHref, func() (map[string]cs.ExternalAuth, error) {
		return c.next.ListExternalAuthsByHref(ctx, clusterHref, hrefs)
	})
}

func firstOf(hrefs []string) string {
	if len(hrefs) == 0 {
		return ""
	}
	return hrefs[0]
}
