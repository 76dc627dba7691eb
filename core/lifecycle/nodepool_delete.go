package lifecycle

import "context"

// nodePoolDelete is a node pool's delete: done once CS answers 404 for it.
type nodePoolDelete struct {
	deletion
	nodePool
}

func (nodePoolDelete) work() string { return "node pool deletion" }

func (h nodePoolDelete) dispatch(ctx context.Context, j *job, _ *tally) (outcome, error) {
	return h.dispatchDelete(ctx, j, h.nodePool)
}

func (h nodePoolDelete) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.pollDelete(ctx, j, h.nodePool)
}
