package lifecycle

import (
	"context"
	"errors"
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
// csCallError. It lets the tick tell a CS fault (back off) from a store
// fault (retry next tick) without each call site saying which is which.
type csCalls struct{ next cs.Client }

var _ cs.Client = csCalls{}

// observe runs one call and wraps its error.
func observe[T any](call, href string, f func() (T, error)) (T, error) {
	start := time.Now()
	v, err := f()
	if err != nil {
		return v, &csCallError{call: call, href: href, elapsed: time.Since(start), err: err}
	}
	return v, nil
}

func observeErr(call, href string, f func() error) error {
	_, err := observe(call, href, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

func (c csCalls) ListClusters(ctx context.Context, search string) ([]cs.Cluster, error) {
	return observe("ListClusters", cs.ClustersPath, func() ([]cs.Cluster, error) { return c.next.ListClusters(ctx, search) })
}

func (c csCalls) PostCluster(ctx context.Context, spec cs.ClusterSpec) (cs.Cluster, error) {
	return observe("PostCluster", cs.ClusterHref(spec.ID), func() (cs.Cluster, error) { return c.next.PostCluster(ctx, spec) })
}

func (c csCalls) GetCluster(ctx context.Context, href string) (cs.Cluster, error) {
	return observe("GetCluster", href, func() (cs.Cluster, error) { return c.next.GetCluster(ctx, href) })
}

func (c csCalls) GetClusterStatus(ctx context.Context, href string) (cs.ClusterStatus, error) {
	return observe("GetClusterStatus", href, func() (cs.ClusterStatus, error) { return c.next.GetClusterStatus(ctx, href) })
}

func (c csCalls) PatchCluster(ctx context.Context, href string, patch cs.ClusterPatch) (cs.Cluster, error) {
	return observe("PatchCluster", href, func() (cs.Cluster, error) { return c.next.PatchCluster(ctx, href, patch) })
}

func (c csCalls) DeleteCluster(ctx context.Context, href string) error {
	return observeErr("DeleteCluster", href, func() error { return c.next.DeleteCluster(ctx, href) })
}

func (c csCalls) GetInflightChecks(ctx context.Context, clusterHref string) ([]cs.InflightCheck, error) {
	return observe("GetInflightChecks", clusterHref, func() ([]cs.InflightCheck, error) {
		return c.next.GetInflightChecks(ctx, clusterHref)
	})
}

func (c csCalls) PostNodePool(ctx context.Context, clusterHref string, spec cs.NodePoolSpec) (cs.NodePool, error) {
	return observe("PostNodePool", cs.NodePoolHref(clusterHref, spec.ID), func() (cs.NodePool, error) {
		return c.next.PostNodePool(ctx, clusterHref, spec)
	})
}

func (c csCalls) GetNodePool(ctx context.Context, href string) (cs.NodePool, error) {
	return observe("GetNodePool", href, func() (cs.NodePool, error) { return c.next.GetNodePool(ctx, href) })
}

func (c csCalls) GetNodePoolStatus(ctx context.Context, href string) (cs.NodePoolStatus, error) {
	return observe("GetNodePoolStatus", href, func() (cs.NodePoolStatus, error) { return c.next.GetNodePoolStatus(ctx, href) })
}

func (c csCalls) PatchNodePool(ctx context.Context, href string, patch cs.NodePoolPatch) (cs.NodePool, error) {
	return observe("PatchNodePool", href, func() (cs.NodePool, error) { return c.next.PatchNodePool(ctx, href, patch) })
}

func (c csCalls) DeleteNodePool(ctx context.Context, href string) error {
	return observeErr("DeleteNodePool", href, func() error { return c.next.DeleteNodePool(ctx, href) })
}

func (c csCalls) PostExternalAuth(ctx context.Context, clusterHref string, spec cs.ExternalAuthSpec) (cs.ExternalAuth, error) {
	return observe("PostExternalAuth", cs.ExternalAuthHref(clusterHref, spec.ID), func() (cs.ExternalAuth, error) {
		return c.next.PostExternalAuth(ctx, clusterHref, spec)
	})
}

func (c csCalls) GetExternalAuth(ctx context.Context, href string) (cs.ExternalAuth, error) {
	return observe("GetExternalAuth", href, func() (cs.ExternalAuth, error) { return c.next.GetExternalAuth(ctx, href) })
}

func (c csCalls) PatchExternalAuth(ctx context.Context, href string, patch cs.ExternalAuthSpec) (cs.ExternalAuth, error) {
	return observe("PatchExternalAuth", href, func() (cs.ExternalAuth, error) { return c.next.PatchExternalAuth(ctx, href, patch) })
}

func (c csCalls) DeleteExternalAuth(ctx context.Context, href string) error {
	return observeErr("DeleteExternalAuth", href, func() error { return c.next.DeleteExternalAuth(ctx, href) })
}

func (c csCalls) PostBreakGlassCredential(ctx context.Context, clusterHref string) (cs.BreakGlassCredential, error) {
	return observe("PostBreakGlassCredential", clusterHref, func() (cs.BreakGlassCredential, error) {
		return c.next.PostBreakGlassCredential(ctx, clusterHref)
	})
}

func (c csCalls) GetBreakGlassCredential(ctx context.Context, href string) (cs.BreakGlassCredential, error) {
	return observe("GetBreakGlassCredential", href, func() (cs.BreakGlassCredential, error) {
		return c.next.GetBreakGlassCredential(ctx, href)
	})
}

func (c csCalls) ListBreakGlassCredentials(ctx context.Context, clusterHref string) ([]cs.BreakGlassCredential, error) {
	return observe("ListBreakGlassCredentials", clusterHref, func() ([]cs.BreakGlassCredential, error) {
		return c.next.ListBreakGlassCredentials(ctx, clusterHref)
	})
}

func (c csCalls) DeleteBreakGlassCredentials(ctx context.Context, clusterHref string) error {
	return observeErr("DeleteBreakGlassCredentials", clusterHref, func() error {
		return c.next.DeleteBreakGlassCredentials(ctx, clusterHref)
	})
}
