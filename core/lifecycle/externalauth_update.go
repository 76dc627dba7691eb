package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// externalAuthUpdate is an external auth's update. Its dispatch PATCHes
// the issuer and moves the operation to Updating, the marker that it was
// sent. Its poll reads CS's external auth once: the update is done when
// CS carries the issuer (CS gives the object no status to wait for, but
// its "error" state fails it). It fails under InvalidRequestContent with
// the merged message.
type externalAuthUpdate struct {
	up updating      // what every update shares (update.go)
	ea *externalAuth // the external auth's CS calls (externalauth.go)
}

func (externalAuthUpdate) work() string { return "external auth update" }

// dispatched: the operation left Accepted, or carries an internalId an
// earlier hcpops wrote (updating.dispatched).
func (h externalAuthUpdate) dispatched(j *job) bool { return h.up.dispatched(j) }

// dispatch: externalAuth.patch (a missing issuer URL fails the operation,
// a busy CS is retried next tick), then the Updating marker
// (updating.dispatch). An external auth CS never had fails at once.
func (h externalAuthUpdate) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	return h.up.dispatch(ctx, r, j, h.ea)
}

// poll: externalAuth.spec's two sources, clusterServiceExternalAuthStatus
// (it exists, not in error) and clusterServiceExternalAuthSpec
// (updating.poll).
func (h externalAuthUpdate) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.up.poll(ctx, j, h.ea)
}

// deadline: what every update has (updating.deadline).
func (h externalAuthUpdate) deadline(j *job) time.Time { return h.up.deadline(j) }

// failure: InvalidRequestContent, the merged message (updating.failure).
func (h externalAuthUpdate) failure() (string, state.FailureMessage) { return h.up.failure() }
