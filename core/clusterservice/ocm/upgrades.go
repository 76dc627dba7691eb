package ocm

import (
	"context"
	"fmt"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Upgrades: a cluster's control plane upgrade policies and a node pool's
// upgrade policies, the two ways ocm-sdk-go v0.1.509's aro_hcp API moves
// an object to another version. Neither list takes a search, so callers
// read every page (a cluster has a handful).

// maxPolicies bounds one object's policy list.
const maxPolicies = 1000

type policyObject interface {
	ID() string
	HREF() string
	Version() string
	State() *arohcp.UpgradePolicyState
	CreationTimestamp() time.Time
}

// policyFrom reads either kind of policy.
func policyFrom[P policyObject](o P) cs.UpgradePolicy {
	return cs.UpgradePolicy{ID: o.ID(), Href: o.HREF(), Version: o.Version(), State: string(o.State().Value()),
		Description: o.State().Description(), Created: o.CreationTimestamp()}
}

// policyPage is one page of either kind of upgrade policy list, as
// collect takes it.
func policyPage[P policyObject, R interface {
	Status() int
	GetTotal() (int, bool)
}](resp R, err error, items func(R) []P) ([]cs.UpgradePolicy, int, bool, error) {
	if err := csError(err, resp.Status()); err != nil {
		return nil, 0, false, err
	}
	var out []cs.UpgradePolicy
	for _, o := range items(resp) {
		out = append(out, policyFrom(o))
	}
	total, ok := resp.GetTotal()
	return out, total, ok, nil
}

func (c *Client) ListControlPlaneUpgradePolicies(ctx context.Context, clusterHref string) ([]cs.UpgradePolicy, error) {
	return call(ctx, c, "ListControlPlaneUpgradePolicies", clusterHref, func(ctx context.Context) ([]cs.UpgradePolicy, error) {
		cc, err := c.clusterLists(clusterHref)
		if err != nil {
			return nil, fmt.Errorf("listing control plane upgrade policies: %w", err)
		}
		out, err := collect(ctx, "GET "+clusterHref+"/control_plane_upgrade_policies", maxPolicies,
			func(ctx context.Context, page int) ([]cs.UpgradePolicy, int, bool, error) {
				resp, err := cc.ControlPlaneUpgradePolicies().List().Page(page).SendContext(ctx)
				return policyPage(resp, err, func(r *arohcp.ControlPlaneUpgradePoliciesListResponse) []*arohcp.ControlPlaneUpgradePolicy {
					return r.Items().Slice()
				})
			})
		if err != nil {
			return nil, fmt.Errorf("listing control plane upgrade policies of %s: %w", clusterHref, err)
		}
		return out, nil
	})
}

func (c *Client) PostControlPlaneUpgradePolicy(ctx context.Context, clusterHref, version string) (cs.UpgradePolicy, error) {
	return call(ctx, c, "PostControlPlaneUpgradePolicy", clusterHref, func(ctx context.Context) (cs.UpgradePolicy, error) {
		cc, err := c.clusterClient(clusterHref)
		if err != nil {
			return cs.UpgradePolicy{}, fmt.Errorf("posting control plane upgrade policy: %w", err)
		}
		body, err := arohcp.NewControlPlaneUpgradePolicy().Version(version).Build()
		if err != nil {
			return cs.UpgradePolicy{}, fmt.Errorf("posting control plane upgrade policy to %s: %w", version, err)
		}
		o, err := objectOf[*arohcp.ControlPlaneUpgradePolicy](cc.ControlPlaneUpgradePolicies().Add().Body(body).SendContext(ctx))
		if err != nil {
			return cs.UpgradePolicy{}, fmt.Errorf("posting control plane upgrade policy of %s to %s: %w", clusterHref, version, err)
		}
		return policyFrom(o), nil
	})
}

func (c *Client) ListNodePoolUpgradePolicies(ctx context.Context, nodePoolHref string) ([]cs.UpgradePolicy, error) {
	return call(ctx, c, "ListNodePoolUpgradePolicies", nodePoolHref, func(ctx context.Context) ([]cs.UpgradePolicy, error) {
		_, path, err := c.nodePoolClient(nodePoolHref)
		if err != nil {
			return nil, fmt.Errorf("listing node pool upgrade policies: %w", err)
		}
		out, err := collect(ctx, "GET "+path+"/upgrade_policies", maxPolicies,
			func(ctx context.Context, page int) ([]cs.UpgradePolicy, int, bool, error) {
				resp, err := arohcp.NewNodePoolClient(c.lists, path).UpgradePolicies().List().Page(page).SendContext(ctx)
				return policyPage(resp, err, func(r *arohcp.NodePoolUpgradePoliciesListResponse) []*arohcp.NodePoolUpgradePolicy {
					return r.Items().Slice()
				})
			})
		if err != nil {
			return nil, fmt.Errorf("listing upgrade policies of node pool %s: %w", nodePoolHref, err)
		}
		return out, nil
	})
}

func (c *Client) PostNodePoolUpgradePolicy(ctx context.Context, nodePoolHref, version string) (cs.UpgradePolicy, error) {
	return call(ctx, c, "PostNodePoolUpgradePolicy", nodePoolHref, func(ctx context.Context) (cs.UpgradePolicy, error) {
		nc, _, err := c.nodePoolClient(nodePoolHref)
		if err != nil {
			return cs.UpgradePolicy{}, fmt.Errorf("posting node pool upgrade policy: %w", err)
		}
		body, err := arohcp.NewNodePoolUpgradePolicy().Version(version).Build()
		if err != nil {
			return cs.UpgradePolicy{}, fmt.Errorf("posting node pool upgrade policy to %s: %w", version, err)
		}
		o, err := objectOf[*arohcp.NodePoolUpgradePolicy](nc.UpgradePolicies().Add().Body(body).SendContext(ctx))
		if err != nil {
			return cs.UpgradePolicy{}, fmt.Errorf("posting upgrade policy of node pool %s to %s: %w", nodePoolHref, version, err)
		}
		return policyFrom(o), nil
	})
}
