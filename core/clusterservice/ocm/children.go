package ocm

import (
	"context"
	"fmt"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Node pools and external auths (break-glass credentials: credentials.go).
// Child hrefs are normalised to /api/aro_hcp/v1alpha1, whichever prefix the
// caller stored.

func (c *Client) PostNodePool(ctx context.Context, clusterHref string, spec cs.NodePoolSpec) (cs.NodePool, error) {
	return call(ctx, c, "PostNodePool", cs.NodePoolHref(clusterHref, spec.ID), func(ctx context.Context) (cs.NodePool, error) {
		cc, err := c.clusterClient(clusterHref)
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("posting node pool: %w", err)
		}
		body, err := buildNodePool(spec)
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("posting node pool to %s: %w", clusterHref, err)
		}
		o, err := objectOf[*arohcp.NodePool](cc.NodePools().Add().Body(body).SendContext(ctx))
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("posting node pool %s to %s: %w", spec.ID, clusterHref, err)
		}
		return nodePoolFrom(o, ""), nil
	})
}

func (c *Client) nodePoolClient(href string) (*arohcp.NodePoolClient, string, error) {
	cid, id, err := parseChild("node pool href", href, cs.NodePoolsSegment)
	if err != nil {
		return nil, "", err
	}
	path := cs.NodePoolHref(cs.ClusterHref(cid), id)
	return arohcp.NewNodePoolClient(c.conn, path), path, nil
}

func (c *Client) GetNodePool(ctx context.Context, href string) (cs.NodePool, error) {
	return call(ctx, c, "GetNodePool", href, func(ctx context.Context) (cs.NodePool, error) {
		nc, path, err := c.nodePoolClient(href)
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("getting node pool: %w", err)
		}
		o, err := objectOf[*arohcp.NodePool](nc.Get().SendContext(ctx))
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("getting node pool %s: %w", href, err)
		}
		return nodePoolFrom(o, path), nil
	})
}

func (c *Client) GetNodePoolStatus(ctx context.Context, href string) (cs.NodePoolStatus, error) {
	return call(ctx, c, "GetNodePoolStatus", href, func(ctx context.Context) (cs.NodePoolStatus, error) {
		nc, _, err := c.nodePoolClient(href)
		if err != nil {
			return cs.NodePoolStatus{}, fmt.Errorf("getting node pool status: %w", err)
		}
		o, err := objectOf[*arohcp.NodePoolStatus](nc.Status().Get().SendContext(ctx))
		if err != nil {
			return cs.NodePoolStatus{}, fmt.Errorf("getting status of node pool %s: %w", href, err)
		}
		return nodePoolStatusFrom(o), nil
	})
}

func (c *Client) PatchNodePool(ctx context.Context, href string, patch cs.NodePoolPatch) (cs.NodePool, error) {
	return call(ctx, c, "PatchNodePool", href, func(ctx context.Context) (cs.NodePool, error) {
		nc, path, err := c.nodePoolClient(href)
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("patching node pool: %w", err)
		}
		body, err := buildNodePoolPatch(patch)
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("patching node pool %s: %w", href, err)
		}
		o, err := objectOf[*arohcp.NodePool](nc.Update().Body(body).SendContext(ctx))
		if err != nil {
			return cs.NodePool{}, fmt.Errorf("patching node pool %s: %w", href, err)
		}
		return nodePoolFrom(o, path), nil
	})
}

func (c *Client) DeleteNodePool(ctx context.Context, href string) error {
	return call0(ctx, c, "DeleteNodePool", href, func(ctx context.Context) error {
		nc, _, err := c.nodePoolClient(href)
		if err != nil {
			return fmt.Errorf("deleting node pool: %w", err)
		}
		resp, err := nc.Delete().SendContext(ctx)
		if err := csError(err, resp.Status()); err != nil {
			return fmt.Errorf("deleting node pool %s: %w", href, err)
		}
		return nil
	})
}

func (c *Client) PostExternalAuth(ctx context.Context, clusterHref string, spec cs.ExternalAuthSpec) (cs.ExternalAuth, error) {
	return call(ctx, c, "PostExternalAuth", cs.ExternalAuthHref(clusterHref, spec.ID), func(ctx context.Context) (cs.ExternalAuth, error) {
		cc, err := c.clusterClient(clusterHref)
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("posting external auth: %w", err)
		}
		body, err := buildExternalAuth(spec, true)
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("posting external auth to %s: %w", clusterHref, err)
		}
		o, err := objectOf[*arohcp.ExternalAuth](cc.ExternalAuthConfig().ExternalAuths().Add().Body(body).SendContext(ctx))
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("posting external auth %s to %s: %w", spec.ID, clusterHref, err)
		}
		return externalAuthFrom(o, ""), nil
	})
}

func (c *Client) externalAuthClient(href string) (*arohcp.ExternalAuthClient, string, string, error) {
	cid, id, err := parseChild("external auth href", href, cs.ExternalAuthsSegment)
	if err != nil {
		return nil, "", "", err
	}
	path := cs.ExternalAuthHref(cs.ClusterHref(cid), id)
	return arohcp.NewExternalAuthClient(c.conn, path), path, id, nil
}

// GetExternalAuth carries the status too: CS has no external auth status
// endpoint.
func (c *Client) GetExternalAuth(ctx context.Context, href string) (cs.ExternalAuth, error) {
	return call(ctx, c, "GetExternalAuth", href, func(ctx context.Context) (cs.ExternalAuth, error) {
		ec, path, _, err := c.externalAuthClient(href)
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("getting external auth: %w", err)
		}
		o, err := objectOf[*arohcp.ExternalAuth](ec.Get().SendContext(ctx))
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("getting external auth %s: %w", href, err)
		}
		return externalAuthFrom(o, path), nil
	})
}

// PatchExternalAuth sends the issuer fields set in patch; patch.ID, when
// set, must name the same external auth as href.
func (c *Client) PatchExternalAuth(ctx context.Context, href string, patch cs.ExternalAuthSpec) (cs.ExternalAuth, error) {
	return call(ctx, c, "PatchExternalAuth", href, func(ctx context.Context) (cs.ExternalAuth, error) {
		ec, path, id, err := c.externalAuthClient(href)
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("patching external auth: %w", err)
		}
		if patch.ID != "" && patch.ID != id {
			return cs.ExternalAuth{}, fmt.Errorf("patching external auth %s: spec ID %q differs from the href's %q", href, patch.ID, id)
		}
		body, err := buildExternalAuth(patch, false)
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("patching external auth %s: %w", href, err)
		}
		o, err := objectOf[*arohcp.ExternalAuth](ec.Update().Body(body).SendContext(ctx))
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("patching external auth %s: %w", href, err)
		}
		return externalAuthFrom(o, path), nil
	})
}

func (c *Client) DeleteExternalAuth(ctx context.Context, href string) error {
	return call0(ctx, c, "DeleteExternalAuth", href, func(ctx context.Context) error {
		ec, _, _, err := c.externalAuthClient(href)
		if err != nil {
			return fmt.Errorf("deleting external auth: %w", err)
		}
		resp, err := ec.Delete().SendContext(ctx)
		if err := csError(err, resp.Status()); err != nil {
			return fmt.Errorf("deleting external auth %s: %w", href, err)
		}
		return nil
	})
}
