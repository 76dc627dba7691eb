package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// externalAuthDelete is an external auth's delete. Its dispatch asks CS
// to delete the external auth and stamps clusterServiceDeletionTimestamp
// on the resource, the marker. Its poll reads the external auth until CS
// answers 404, the evidence that completes it; while CS reports no state
// the delete goes on. It fails under InternalServerError with the failing
// source's own message.
type externalAuthDelete struct {
	d  deletion      // what every delete shares (delete.go)
	ea *externalAuth // the external auth's CS calls (externalauth.go)
}

func (externalAuthDelete) work() string { return "external auth deletion" }

// dispatched: the resource carries clusterServiceDeletionTimestamp, or the
// operation is a legacy one (deletion.dispatched).
func (h externalAuthDelete) dispatched(j *job) bool { return h.d.dispatched(j) }

// dispatch: externalAuth.remove at the recorded href, or at the one its
// create would have given it, then the stamp (deletion.dispatch).
func (h externalAuthDelete) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	return h.d.dispatch(ctx, r, j, h.ea)
}

// poll: externalAuth.status until CS answers 404; one CS never had is
// gone at once (deletion.poll).
func (h externalAuthDelete) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.d.poll(ctx, j, h.ea)
}

// deadline: the resource's deleteOperationCompletionDeadline, or
// DeleteDeadline from the start; none on the legacy path
// (deletion.deadline).
func (h externalAuthDelete) deadline(j *job) time.Time { return h.d.deadline(j) }

// failure: InternalServerError, the failing source's message
// (deletion.failure).
func (h externalAuthDelete) failure() (string, state.FailureMessage) { return h.d.failure() }
