package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// nodePoolDelete is a node pool's delete. Its dispatch asks CS to delete
// the node pool (a 404, or a cluster already uninstalling, means it is
// under way) and stamps clusterServiceDeletionTimestamp on the resource,
// the marker. Its poll reads the node pool until CS answers 404, the
// evidence that completes it (completeDelete soft-deletes the resource,
// then writes Succeeded). It fails under InternalServerError with the
// failing source's own message.
type nodePoolDelete struct {
	d  deletion  // what every delete shares (delete.go)
	np *nodePool // the node pool's CS calls (nodepool.go)
}

func (nodePoolDelete) work() string { return "node pool deletion" }

// dispatched: the resource carries clusterServiceDeletionTimestamp, or the
// operation is a legacy one (deletion.dispatched).
func (h nodePoolDelete) dispatched(j *job) bool { return h.d.dispatched(j) }

// dispatch: nodePool.remove at the recorded href, or at the one its
// create would have given it, then the stamp (deletion.dispatch).
func (h nodePoolDelete) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	return h.d.dispatch(ctx, r, j, h.np)
}

// poll: nodePool.status until CS answers 404; a node pool CS never had
// is gone at once (deletion.poll).
func (h nodePoolDelete) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.d.poll(ctx, j, h.np)
}

// deadline: the resource's deleteOperationCompletionDeadline, or
// DeleteDeadline from the start; none on the legacy path
// (deletion.deadline).
func (h nodePoolDelete) deadline(j *job) time.Time { return h.d.deadline(j) }

// failure: InternalServerError, the failing source's message
// (deletion.failure).
func (h nodePoolDelete) failure() (string, state.FailureMessage) { return h.d.failure() }
