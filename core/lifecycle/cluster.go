package lifecycle

import (
	"context"
	"fmt"
	"slices"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// cluster is the cluster kind: a CS cluster at /api/aro_hcp/v1alpha1/
// clusters/{id}, whose ID the create chooses before it POSTs.
type cluster struct {
	cs cs.Client
	up upgrades
}

func (cluster) noun() string { return "cluster" }

func (c cluster) status(ctx context.Context, j *job, href string) (*state.OperationState, error) {
	st, err := j.reads.clusterStatus(ctx, href)
	if err != nil {
		return nil, fmt.Errorf("reading status of cluster %s: %w", href, err)
	}
	s, err := c.convert(ctx, j, href, st)
	j.alive = st.State == cs.ClusterStateReady
	if err != nil || j.op.Properties.Request != document.RequestCreate || s.ProvisioningState != arm.ProvisioningStateSucceeded {
		return s, err
	}
	got, err := j.reads.cluster(ctx, href)
	if err != nil {
		return nil, fmt.Errorf("reading cluster %s: %w", href, err)
	}
	return s, c.up.settled(ctx, j.res, got.Version, s)
}

func (c cluster) spec(ctx context.Context, j *job, href string) ([]*state.OperationState, error) {
	got, err := j.reads.cluster(ctx, href)
	if err != nil {
		return nil, fmt.Errorf("reading cluster %s: %w", href, err)
	}
	s, err := c.convert(ctx, j, href, got.Status)
	if err != nil {
		return nil, err
	}
	v, err := c.up.state(ctx, docRef(j.op), c.up.controlPlane(href), "clusterServiceClusterVersion", j.res.Version().ID, got.Version)
	if err != nil {
		return nil, err
	}
	states := []*state.OperationState{s, specState("clusterServiceClusterSpec", clusterSpecDiffers(j.res, got)), v}
	return states, c.up.settled(ctx, j.res, got.Version, states...)
}

// patch reads CS's cluster first and asks CS for the control plane
// upgrade a version change needs (refused, naming the versions possible,
// when CS offers none), then PATCHes the other fields.
func (c cluster) patch(ctx context.Context, j *job, href string) error {
	if err := checkClusterPatch(j.res); err != nil {
		return err
	}
	live, err := c.cs.GetCluster(ctx, href)
	if err != nil {
		return fmt.Errorf("reading cluster %s before its update: %w", href, err)
	}
	v := j.res.Version()
	asked := versionAsked{want: v.ID, group: channelGroup(v.ChannelGroup), running: live.Version}
	if err := c.up.start(ctx, c.up.controlPlane(href), asked); err != nil {
		return err
	}
	_, err = c.cs.PatchCluster(ctx, href, clusterPatch(j.res))
	return err
}

func (c cluster) remove(ctx context.Context, href string) error { return c.cs.DeleteCluster(ctx, href) }

// convert is the cluster's state for j's request; a provision error that
// points at the inflight checks reads them (state.ConvertClusterStatus).
func (c cluster) convert(ctx context.Context, j *job, href string, st cs.ClusterStatus) (*state.OperationState, error) {
	s, cerr, err := state.ConvertClusterStatus(ctx, c.cs, href, st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return nil, fmt.Errorf("converting status of cluster %s: %w", href, err)
	}
	return state.FromConversion(s, cerr).WithSource("clusterServiceClusterStatus").
		Working(underWay(j.op.Properties.Request, st.State)), nil
}

// clusterPatch carries the fields a cluster update may change.
func clusterPatch(res *document.Resource) cs.ClusterPatch {
	var patch cs.ClusterPatch
	if m, ok := res.NodeDrainTimeoutMinutes(); ok {
		n := int(m)
		patch.NodeDrainGracePeriodMinutes = &n
	}
	if cidrs, ok := res.AuthorizedCIDRs(); ok {
		patch.AuthorizedCIDRs = append([]string{}, cidrs...)
	}
	return patch
}

// clusterSpecDiffers says which field clusterPatch sends that CS does not
// carry yet ("" when it carries them all).
func clusterSpecDiffers(res *document.Resource, c cs.Cluster) string {
	if m, ok := res.NodeDrainTimeoutMinutes(); ok && int64(c.NodeDrainGracePeriodMinutes) != m {
		return fmt.Sprintf("cluster service node drain grace period is %d minutes, want %d", c.NodeDrainGracePeriodMinutes, m)
	}
	if want, ok := res.AuthorizedCIDRs(); ok && !sameSet(want, c.AuthorizedCIDRs) {
		return fmt.Sprintf("cluster service authorized CIDRs are %v, want %v", c.AuthorizedCIDRs, want)
	}
	return ""
}

// checkClusterPatch refuses cluster values CS would refuse.
func checkClusterPatch(res *document.Resource) error {
	if m, ok := res.NodeDrainTimeoutMinutes(); ok && m < 0 {
		return invalid("cluster", "properties.nodeDrainTimeoutMinutes", m, "it must not be negative")
	}
	return nil
}

// sameSet compares string lists as sets.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}
