package ocm

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/openshift-online/ocm-sdk-go"
	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// maxListed bounds a plain list (one not searched by ids) that matches a
// few objects (clusters searched by name, a cluster's credentials), so
// one that goes on is one that does not end; maxVersions, CS's versions.
const (
	maxListed   = 1000
	maxVersions = 10000
)

// listPageSize is CS's default page size, which a plain list gets: like
// ARO-HCP's iterators, it sends no size (a CS may page smaller).
const listPageSize = 100

// collect pages through a plain CS list the way ARO-HCP's iterators do
// (page=1, 2, ...) until it has total items or gets an empty page. A page
// over listPageSize (in items or bytes), or more than maxItems items in
// all, makes the list an error wrapping cs.ErrInconsistentList.
func collect[T any](ctx context.Context, call string, maxItems int, fetch func(ctx context.Context, page int) (items []T, total int, hasTotal bool, err error)) ([]T, error) {
	var out []T
	for page := 1; ; page++ {
		items, total, hasTotal, err := fetch(ctx, page)
		switch {
		case errors.Is(err, errBodyLimit):
			return nil, fmt.Errorf("%w: %s page %d: the page is larger than %d bytes", cs.ErrInconsistentList, call, page,
				pageBytes(listPageSize))
		case err != nil:
			return nil, fmt.Errorf("page %d: %w", page, err)
		case len(items) > listPageSize:
			return nil, fmt.Errorf("%w: %s page %d: %d items, more than CS's page size of %d", cs.ErrInconsistentList, call, page, len(items), listPageSize)
		}
		out = append(out, items...)
		if len(out) > maxItems {
			return nil, fmt.Errorf("%w: %s: more than %d items", cs.ErrInconsistentList, call, maxItems)
		}
		if len(items) == 0 || hasTotal && len(out) >= total {
			return out, nil
		}
	}
}

func (c *Client) ListClusters(ctx context.Context, search string) ([]cs.Cluster, error) {
	return call(ctx, c, "ListClusters", cs.ClustersPath, func(ctx context.Context) ([]cs.Cluster, error) {
		clusters := arohcp.NewClustersClient(c.lists, cs.ClustersPath)
		out, err := collect(ctx, "GET "+cs.ClustersPath+" search="+search, maxListed, func(ctx context.Context, page int) ([]cs.Cluster, int, bool, error) {
			req := clusters.List().Page(page)
			if search != "" {
				req.Search(search)
			}
			resp, err := req.SendContext(ctx)
			if err := csError(err, resp.Status()); err != nil {
				return nil, 0, false, err
			}
			var items []cs.Cluster
			for _, o := range resp.Items().Slice() {
				items = append(items, clusterFrom(o))
			}
			total, ok := resp.GetTotal()
			return items, total, ok, nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing clusters (search %q): %w", search, err)
		}
		return out, nil
	})
}

// PostCluster creates the cluster with spec.ID and fails if CS answers with
// another ID, since dispatch's idempotency rests on that ID.
func (c *Client) PostCluster(ctx context.Context, spec cs.ClusterSpec) (cs.Cluster, error) {
	return call(ctx, c, "PostCluster", cs.ClusterHref(spec.ID), func(ctx context.Context) (cs.Cluster, error) {
		body, err := buildCluster(spec)
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("posting cluster: %w", err)
		}
		o, err := objectOf[*arohcp.Cluster](arohcp.NewClustersClient(c.conn, cs.ClustersPath).Add().Body(body).SendContext(ctx))
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("posting cluster %s: %w", spec.ID, err)
		}
		if o.ID() != spec.ID {
			return cs.Cluster{}, fmt.Errorf("posting cluster %s: clusters service created ID %q instead", spec.ID, o.ID())
		}
		return clusterFrom(o), nil
	})
}

func (c *Client) clusterClient(href string) (*arohcp.ClusterClient, error) {
	return clusterOn(c.conn, href)
}

// clusterLists is the cluster's client for the lists hcpops decides from.
func (c *Client) clusterLists(href string) (*arohcp.ClusterClient, error) {
	return clusterOn(c.lists, href)
}

func clusterOn(conn *sdk.Connection, href string) (*arohcp.ClusterClient, error) {
	id, err := parseCluster("cluster href", href)
	if err != nil {
		return nil, err
	}
	return arohcp.NewClusterClient(conn, cs.ClusterHref(id)), nil
}

func (c *Client) GetCluster(ctx context.Context, href string) (cs.Cluster, error) {
	return call(ctx, c, "GetCluster", href, func(ctx context.Context) (cs.Cluster, error) {
		cc, err := c.clusterClient(href)
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("getting cluster: %w", err)
		}
		o, err := objectOf[*arohcp.Cluster](cc.Get().SendContext(ctx))
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("getting cluster %s: %w", href, err)
		}
		return clusterFrom(o), nil
	})
}

func (c *Client) GetClusterStatus(ctx context.Context, href string) (cs.ClusterStatus, error) {
	return call(ctx, c, "GetClusterStatus", href, func(ctx context.Context) (cs.ClusterStatus, error) {
		cc, err := c.clusterClient(href)
		if err != nil {
			return cs.ClusterStatus{}, fmt.Errorf("getting cluster status: %w", err)
		}
		o, err := objectOf[*arohcp.ClusterStatus](cc.Status().Get().SendContext(ctx))
		if err != nil {
			return cs.ClusterStatus{}, fmt.Errorf("getting status of cluster %s: %w", href, err)
		}
		return clusterStatusFrom(o), nil
	})
}

// PatchCluster sends only the fields set in patch.
func (c *Client) PatchCluster(ctx context.Context, href string, patch cs.ClusterPatch) (cs.Cluster, error) {
	return call(ctx, c, "PatchCluster", href, func(ctx context.Context) (cs.Cluster, error) {
		cc, err := c.clusterClient(href)
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("patching cluster: %w", err)
		}
		body, err := buildClusterPatch(patch)
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("patching cluster %s: %w", href, err)
		}
		o, err := objectOf[*arohcp.Cluster](cc.Update().Body(body).SendContext(ctx))
		if err != nil {
			return cs.Cluster{}, fmt.Errorf("patching cluster %s: %w", href, err)
		}
		return clusterFrom(o), nil
	})
}

func (c *Client) DeleteCluster(ctx context.Context, href string) error {
	return call0(ctx, c, "DeleteCluster", href, func(ctx context.Context) error {
		cc, err := c.clusterClient(href)
		if err != nil {
			return fmt.Errorf("deleting cluster: %w", err)
		}
		resp, err := cc.Delete().SendContext(ctx)
		if err := csError(err, resp.Status()); err != nil {
			return fmt.Errorf("deleting cluster %s: %w", href, err)
		}
		return nil
	})
}

// GetInflightChecks reads the checks behind an OCM4001 failure. Like
// ARO-HCP it sends no paging: CS returns every check of a cluster at once.
func (c *Client) GetInflightChecks(ctx context.Context, clusterHref string) ([]cs.InflightCheck, error) {
	return call(ctx, c, "GetInflightChecks", clusterHref, func(ctx context.Context) ([]cs.InflightCheck, error) {
		cc, err := c.clusterLists(clusterHref)
		if err != nil {
			return nil, fmt.Errorf("getting inflight checks: %w", err)
		}
		resp, err := cc.InflightChecks().List().SendContext(ctx)
		if err := csError(err, resp.Status()); err != nil {
			return nil, fmt.Errorf("getting inflight checks of cluster %s: %w", clusterHref, err)
		}
		var out []cs.InflightCheck
		for _, o := range resp.Items().Slice() {
			out = append(out, inflightCheckFrom(o))
		}
		return out, nil
	})
}
