package lifecycle

import "context"

// nodePoolCreate is a node pool's create: under its cluster, once that is
// in CS, with the node pool's lower-cased ARM name as its CS ID.
type nodePoolCreate struct {
	creation
	nodePool
}

func (nodePoolCreate) work() string { return "node pool creation" }

func (h nodePoolCreate) dispatch(ctx context.Context, j *job, _ *tally) (outcome, error) {
	return h.createChild(ctx, j, h.nodePool)
}

func (h nodePoolCreate) poll(ctx context.Context, j *job) (pollResult, error) {
	return pollStatus(ctx, j, h.nodePool)
}
