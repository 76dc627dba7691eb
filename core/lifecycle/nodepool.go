package lifecycle

import (
	"context"
	"fmt"
	"maps"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// nodePoolAdapter is the node pool's part of the request handlers.
func (e *Engine) nodePoolAdapter() *adapter {
	return &adapter{
		kind: document.KindNodePool,
		noun: "node pool",
		create: func(ctx context.Context, j *job) (outcome, error) {
			return e.createChild(ctx, j, e.postNodePool)
		},
		status: func(ctx context.Context, j *job, href string) (*state.OperationState, error) {
			st, err := j.reads.nodePoolStatus(ctx, href)
			if err != nil {
				return nil, fmt.Errorf("reading status of node pool %s: %w", href, err)
			}
			return convertNodePool(j, href, st)
		},
		get: func(ctx context.Context, j *job, href string) ([]*state.OperationState, error) {
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
			return []*state.OperationState{s, specState("clusterServiceNodePoolSpec", differs)}, nil
		},
		patch: func(ctx context.Context, j *job, href string) error {
			spec, err := j.res.NodePool()
			if err != nil {
				return fmt.Errorf("%w: %w", errMalformed, err)
			}
			if err := checkNodePool(spec); err != nil {
				return err
			}
			replicas := int(spec.Replicas)
			_, err = e.cs.PatchNodePool(ctx, href, cs.NodePoolPatch{Replicas: &replicas, Labels: spec.Labels})
			return err
		},
		delete:      e.cs.DeleteNodePool,
		uncommitted: noUncommitted,
		childHref:   cs.NodePoolHref,
	}
}

// postNodePool creates the node pool of j.res under its cluster with the
// caller-chosen id, unless a GET finds it there already.
func (e *Engine) postNodePool(ctx context.Context, j *job, clusterHref, id string) error {
	spec, err := j.res.NodePool()
	if err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	if err := checkNodePool(spec); err != nil {
		return err // CS can never have accepted it, so there is nothing to adopt
	}
	_, err = e.cs.GetNodePool(ctx, cs.NodePoolHref(clusterHref, id))
	if cs.Classify(err) != cs.Absent {
		return err
	}
	_, err = e.cs.PostNodePool(ctx, clusterHref, cs.NodePoolSpec{
		ID: id, VersionID: spec.Version.ID, ChannelGroup: spec.Version.ChannelGroup, VMSize: spec.VMSize,
		Replicas: int(spec.Replicas), AutoRepair: spec.AutoRepair, Labels: spec.Labels,
	})
	return err
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
	return state.FromConversion(s, cerr).WithSource("clusterServiceNodePoolStatus"), nil
}
