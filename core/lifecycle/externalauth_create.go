package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// externalAuthCreate is an external auth's create. Its dispatch POSTs the
// external auth under its cluster once that is in CS (a later tick
// retries until then), with its lower-cased ARM name as the CS ID, and
// records the href as clusterServiceID, the marker. Its poll is done once
// the object exists (CS often gives it no status), unless CS says it is
// in error. It must end by the deadline, and fails under
// InternalServerError with the merged message.
type externalAuthCreate struct {
	cr creation      // what every create shares (create.go)
	ea *externalAuth // the external auth's CS calls (externalauth.go)
}

func (externalAuthCreate) work() string { return "external auth creation" }

// dispatched: the resource carries its clusterServiceID (creation.dispatched).
func (h externalAuthCreate) dispatched(j *job) bool { return h.cr.dispatched(j) }

// dispatch: externalAuth.post under the parent's href (an issuer without
// a URL is refused first), then the ID recorded (creation.createChild).
func (h externalAuthCreate) dispatch(ctx context.Context, _ *run, j *job) (outcome, error) {
	return h.cr.createChild(ctx, j, h.ea)
}

// poll: externalAuth.read, and the object's existence as the source
// externalAuthClusterServiceCreate (externalAuthExists: Failed only when
// CS says "error").
func (h externalAuthCreate) poll(ctx context.Context, j *job) (pollResult, error) {
	ea, err := h.ea.read(ctx, j, j.res.ClusterServiceID())
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(externalAuthExists(ea).WithSource("externalAuthClusterServiceCreate")), nil
}

// deadline is the resource's createOperationCompletionDeadline, or
// CreateDeadline from the start (creation.deadline).
func (h externalAuthCreate) deadline(j *job) time.Time { return h.cr.deadline(j) }

// failure: InternalServerError, the merged message (creation.failure).
func (h externalAuthCreate) failure() (string, state.FailureMessage) { return h.cr.failure() }
