package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// nodePoolCreate is a node pool's create. Its dispatch POSTs the node pool
// under its cluster once that is in CS (a later tick retries until then),
// with its lower-cased ARM name as the CS ID, so a repeated dispatch
// adopts what the first made; it records the href as clusterServiceID,
// the marker. Its poll reads the node pool's status until it is ready and
// runs the version asked. It must end by the deadline, and fails under
// InternalServerError with the merged message.
type nodePoolCreate struct {
	cr creation  // what every create shares (create.go)
	np *nodePool // the node pool's CS calls (nodepool.go)
}

func (nodePoolCreate) work() string { return "node pool creation" }

// dispatched: the resource carries its clusterServiceID (creation.dispatched).
func (h nodePoolCreate) dispatched(j *job) bool { return h.cr.dispatched(j) }

// dispatch: nodePool.post under the parent's href (a negative replica
// count is refused first), then the ID recorded (creation.createChild).
func (h nodePoolCreate) dispatch(ctx context.Context, _ *run, j *job) (outcome, error) {
	return h.cr.createChild(ctx, j, h.np)
}

// poll: nodePool.status, clusterServiceNodePoolStatus (pollStatus).
func (h nodePoolCreate) poll(ctx context.Context, j *job) (pollResult, error) {
	return pollStatus(ctx, j, h.np)
}

// deadline is the resource's createOperationCompletionDeadline, or
// CreateDeadline from the start (creation.deadline).
func (h nodePoolCreate) deadline(j *job) time.Time { return h.cr.deadline(j) }

// failure: InternalServerError, the merged message (creation.failure).
func (h nodePoolCreate) failure() (string, state.FailureMessage) { return h.cr.failure() }
