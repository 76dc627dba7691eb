package lifecycle

import "context"

// nodePoolUpdate is a node pool's update: it PATCHes the replicas and
// labels, and is done once CS carries them and the node pool is ready.
type nodePoolUpdate struct {
	updating
	nodePool
}

func (nodePoolUpdate) work() string { return "node pool update" }

func (h nodePoolUpdate) dispatch(ctx context.Context, j *job, t *tally) (outcome, error) {
	return h.dispatchUpdate(ctx, j, t, h.nodePool)
}

func (h nodePoolUpdate) poll(ctx context.Context, j *job) (pollResult, error) {
	return pollUpdate(ctx, j, h.nodePool)
}
