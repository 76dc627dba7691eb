package lifecycle

import (
	"context"
	"fmt"
	"maps"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/state"
)

// dispatchNodePoolUpdate PATCHes replicas and labels. CS refuses while the
// node pool or its cluster is busy; that is retried, as ARO-HCP does.
func (e *Engine) dispatchNodePoolUpdate(ctx context.Context, j *job) (outcome, error) {
	href, err := e.updateTarget(ctx, j)
	if href == "" {
		return outcomeSkipped, err
	}
	spec, err := j.res.NodePool()
	if err != nil {
		return outcomeSkipped, fmt.Errorf("%w: %w", errMalformed, err)
	}
	replicas := int(spec.Replicas)
	if _, err := e.cs.PatchNodePool(ctx, href, cs.NodePoolPatch{Replicas: &replicas, Labels: spec.Labels}); err != nil {
		if refused(err, "can only be updated", "state") {
			return outcomeDeferred, fmt.Errorf("%w: %w", errRetryLater, err)
		}
		return outcomeSkipped, fmt.Errorf("updating node pool %s: %w", href, err)
	}
	return e.recordInternalID(ctx, j, href)
}

func (e *Engine) pollNodePoolCreate(ctx context.Context, j *job) (pollResult, error) {
	href := j.res.ClusterServiceID()
	st, err := e.cs.GetNodePoolStatus(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading status of node pool %s: %w", href, err)
	}
	return convertNodePool(j, href, st)
}

// pollNodePoolUpdate is Updating until CS carries the replicas and labels
// the update asked for.
func (e *Engine) pollNodePoolUpdate(ctx context.Context, j *job) (pollResult, error) {
	href := j.op.Properties.InternalID
	np, err := e.cs.GetNodePool(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading node pool %s: %w", href, err)
	}
	r, err := convertNodePool(j, href, np.Status)
	if err != nil || r.status != arm.ProvisioningStateSucceeded {
		return r, err
	}
	spec, err := j.res.NodePool()
	if err != nil {
		return pollResult{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if int64(np.Replicas) != spec.Replicas || spec.Labels != nil && !maps.Equal(spec.Labels, np.Labels) {
		r.status = arm.ProvisioningStateUpdating
	}
	return r, nil
}

func convertNodePool(j *job, href string, st cs.NodePoolStatus) (pollResult, error) {
	s, cerr, err := state.ConvertNodePoolStatus(st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return pollResult{}, fmt.Errorf("converting status of node pool %s: %w", href, err)
	}
	return pollResult{status: s, err: cerr}, nil
}
