package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// nodePoolUpdate is a node pool's update. Its dispatch asks CS for the
// upgrade a version change needs (bounded by the control plane's
// version), PATCHes the replicas and labels, and moves the operation to
// Updating, the marker that it was sent. Its poll reads CS's node pool
// once: the update is done when the node pool is ready, carries those
// fields and runs the version asked. It fails under
// InvalidRequestContent with the merged message.
type nodePoolUpdate struct {
	up updating  // what every update shares (update.go)
	np *nodePool // the node pool's CS calls (nodepool.go)
}

func (nodePoolUpdate) work() string { return "node pool update" }

// dispatched: the operation left Accepted, or carries an internalId an
// earlier hcpops wrote (updating.dispatched).
func (h nodePoolUpdate) dispatched(j *job) bool { return h.up.dispatched(j) }

// dispatch: nodePool.patch (refused values fail the operation, a busy CS
// is retried next tick), then the Updating marker (updating.dispatch). A
// node pool CS never had fails at once.
func (h nodePoolUpdate) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	return h.up.dispatch(ctx, r, j, h.np)
}

// poll: nodePool.spec's three sources, clusterServiceNodePoolStatus,
// clusterServiceNodePoolSpec and clusterServiceNodePoolVersion
// (updating.poll).
func (h nodePoolUpdate) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.up.poll(ctx, j, h.np)
}

// deadline: what every update has (updating.deadline).
func (h nodePoolUpdate) deadline(j *job) time.Time { return h.up.deadline(j) }

// failure: InvalidRequestContent, the merged message (updating.failure).
func (h nodePoolUpdate) failure() (string, state.FailureMessage) { return h.up.failure() }
