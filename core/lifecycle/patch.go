package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// dispatchUpdate PATCHes what an update may change and moves the
// operation (and its resource) to Updating, the marker that the PATCH was
// sent: ARO-HCP writes no internalId on an update. CS refusing while the
// object or its cluster is busy is retried later, as ARO-HCP does. A crash
// before the marker repeats the PATCH, which sends the same values.
func (e *Engine) dispatchUpdate(ctx context.Context, j *job, t *tally) (outcome, error) {
	href := j.res.ClusterServiceID()
	if href == "" {
		return outcomeSkipped, e.failNeverCreated(ctx, j, t)
	}
	if err := j.a.patch(ctx, j, href); err != nil {
		if cs.IsBusy(err) {
			return outcomeSkipped, retryLater("%w", err)
		}
		return outcomeSkipped, fmt.Errorf("updating %s %s: %w", j.kind, href, refusedBy(err, j.a.noun, "update"))
	}
	changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateUpdating, nil, t)
	if err != nil {
		return outcomeSkipped, fmt.Errorf("marking the update of %s %s sent: %w", j.kind, href, err)
	}
	if changed {
		t.changed.Add(1)
	}
	return outcomeDispatched, nil
}

// pollUpdate reads the object once: its state, and whether CS already
// carries what the update asked for (the spec source is Updating until it
// does, so the worst of the two is).
func (e *Engine) pollUpdate(ctx context.Context, j *job) (pollResult, error) {
	href := j.res.ClusterServiceID()
	if href == "" {
		href = j.op.Properties.InternalID // written by an earlier hcpops
	}
	states, err := j.a.get(ctx, j, href)
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(states...), nil
}

// failNeverCreated WRITES a Failed status: a resource CS never had (its
// create failed before the POST) can never be updated, so its update fails
// at once instead of waiting forever.
func (e *Engine) failNeverCreated(ctx context.Context, j *job, t *tally) error {
	j.log.Warn("resource has no clusters service object; failing the update")
	changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, &arm.CloudErrorBody{
		Code:    arm.CodeInternalServerError,
		Message: fmt.Sprintf("The %s was never created, so it cannot be updated.", j.kind),
	}, t)
	if changed {
		t.changed.Add(1)
	}
	return err
}

// recordInternalID stores href as the operation's internalId: the marker
// that a break-glass credential was requested (the one place ARO-HCP's
// backend writes an internalId).
func (e *Engine) recordInternalID(ctx context.Context, j *job, href string) (outcome, error) {
	op, _, err := e.mutateOperation(ctx, j.log, j.op, func(o *document.OperationDocument) (bool, error) {
		if o.Properties.InternalID != "" || o.Properties.Status.IsTerminal() {
			return false, nil
		}
		o.Properties.InternalID = href
		return true, nil
	})
	if err != nil {
		return outcomeSkipped, fmt.Errorf("recording internal ID %s: %w", href, err)
	}
	if op != nil {
		j.op = op
	}
	return outcomeDispatched, nil
}
