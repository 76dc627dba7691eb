package lifecycle

import (
	"context"
	"fmt"
	"maps"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// nodePool is the node pool kind: a child of its cluster in CS, at
// {cluster href}/node_pools/{lower-cased ARM name}.
type nodePool struct {
	cs cs.Client
	up upgrades
}

func (nodePool) noun() string { return "node pool" }

func (nodePool) href(clusterHref, id string) string { return cs.NodePoolHref(clusterHref, id) }

func (n nodePool) status(ctx context.Context, j *job, href string) (*state.OperationState, error) {
	st, err := j.reads.nodePoolStatus(ctx, href)
	if err != nil {
		return nil, fmt.Errorf("reading status of node pool %s: %w", href, err)
	}
	s, err := convertNodePool(j, href, st)
	j.alive = st.State == cs.NodePoolStateReady
	if err != nil || j.op.Properties.Request != document.RequestCreate || s.ProvisioningState != arm.ProvisioningStateSucceeded {
		return s, err
	}
	np, err := j.reads.nodePool(ctx, href)
	if err != nil {
		return nil, fmt.Errorf("reading node pool %s: %w", href, err)
	}
	return s, n.up.settled(ctx, j.res, np.Version, s)
}

func (n nodePool) spec(ctx context.Context, j *job, href string) ([]*state.OperationState, error) {
	np, err := j.reads.nodePool(ctx, href)
	if err != nil {
		return nil, fmt.Errorf("reading node pool %s: %w", href, err)
	}
	s, err := convertNodePool(j, href, np.Status)
	if err != nil {
		return nil, err
	}
	differs, err := nodePoolSpecDiffers(j.res, np)
	if err != nil {
		return nil, err
	}
	v, err := n.up.state(ctx, docRef(j.op), n.up.nodePool(href), "clusterServiceNodePoolVersion", j.res.Version().ID, np.Version)
	if err != nil {
		return nil, err
	}
	states := []*state.OperationState{s, specState("clusterServiceNodePoolSpec", differs), v}
	return states, n.up.settled(ctx, j.res, np.Version, states...)
}

// patch reads CS's node pool first and asks CS for the upgrade a version
// change needs, bounded by its control plane's version (refused, naming
// the versions possible, when CS offers none), then PATCHes the replicas
// and labels.
func (n nodePool) patch(ctx context.Context, j *job, href string) error {
	spec, err := nodePoolSpec(j.res)
	if err != nil {
		return err
	}
	live, err := n.cs.GetNodePool(ctx, href)
	if err != nil {
		return fmt.Errorf("reading node pool %s before its update: %w", href, err)
	}
	asked := versionAsked{want: spec.Version.ID, group: channelGroup(spec.Version.ChannelGroup), running: live.Version}
	if !versionRuns(asked.want, asked.running) {
		_, clusterHref := cs.ParseHref(href)
		cp, err := n.cs.GetCluster(ctx, clusterHref)
		if err != nil {
			return fmt.Errorf("reading cluster %s before the upgrade of node pool %s: %w", clusterHref, href, err)
		}
		asked.ceiling = cp.Version
	}
	if err := n.up.start(ctx, n.up.nodePool(href), asked); err != nil {
		return err
	}
	replicas := int(spec.Replicas)
	_, err = n.cs.PatchNodePool(ctx, href, cs.NodePoolPatch{Replicas: &replicas, Labels: spec.Labels})
	return err
}

func (n nodePool) post(ctx context.Context, j *job, clusterHref, id string) error {
	spec, err := nodePoolSpec(j.res)
	if err != nil {
		return err // CS can never have accepted it, so there is nothing to adopt
	}
	_, err = n.cs.GetNodePool(ctx, cs.NodePoolHref(clusterHref, id))
	if cs.Classify(err) != cs.Absent {
		return err
	}
	_, err = n.cs.PostNodePool(ctx, clusterHref, cs.NodePoolSpec{
		ID: id, VersionID: spec.Version.ID, ChannelGroup: spec.Version.ChannelGroup, VMSize: spec.VMSize,
		Replicas: int(spec.Replicas), AutoRepair: spec.AutoRepair, Labels: spec.Labels,
	})
	return err
}

func (n nodePool) remove(ctx context.Context, href string) error {
	return n.cs.DeleteNodePool(ctx, href)
}

// nodePoolSpec is the node pool j.res asks for, refused when CS would
// refuse it.
func nodePoolSpec(res *document.Resource) (document.NodePoolSpec, error) {
	spec, err := res.NodePool()
	if err != nil {
		return spec, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if spec.Replicas < 0 {
		return spec, invalid("node pool", "properties.replicas", spec.Replicas, "it must not be negative")
	}
	return spec, nil
}

// nodePoolSpecDiffers says which of the replicas and labels an update
// sends CS does not carry yet ("" when it carries both).
func nodePoolSpecDiffers(res *document.Resource, np cs.NodePool) (string, error) {
	spec, err := res.NodePool()
	if err != nil {
		return "", fmt.Errorf("%w: %w", errMalformed, err)
	}
	switch {
	case int64(np.Replicas) != spec.Replicas:
		return fmt.Sprintf("cluster service node pool replicas is %d, want %d", np.Replicas, spec.Replicas), nil
	case spec.Labels != nil && !maps.Equal(spec.Labels, np.Labels):
		return fmt.Sprintf("cluster service node pool labels are %v, want %v", np.Labels, spec.Labels), nil
	}
	return "", nil
}

func convertNodePool(j *job, href string, st cs.NodePoolStatus) (*state.OperationState, error) {
	s, cerr, err := state.ConvertNodePoolStatus(st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return nil, fmt.Errorf("converting status of node pool %s: %w", href, err)
	}
	return state.FromConversion(s, cerr).WithSource("clusterServiceNodePoolStatus").
		Working(underWay(j.op.Properties.Request, st.State)), nil
}
