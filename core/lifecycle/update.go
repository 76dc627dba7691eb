package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/state"
)

// updating is what every update shares: ARO-HCP writes no internalId on
// an update, so its PATCH moving the operation out of Accepted is the
// marker that it was sent (an internalId is what hcpops wrote before it
// stopped writing one there), and fails with the merged message. Its
// dispatch and poll are the same for every kind but for k's calls.
type updating struct {
	e *Engine
	k kind
}

func (updating) dispatched(j *job) bool {
	return j.op.Properties.Status != arm.ProvisioningStateAccepted || j.op.Properties.InternalID != ""
}

// failure codes a poll's failure InternalServerError where CS gave no
// code of its own: what fails an update after its dispatch is CS's doing
// (its upgrade failed or was cancelled, the object went into error), not
// the caller's, so it must not reach ARM as a 4xx. Upstream writes
// InvalidRequestContent here; the caller's own faults are refused at
// dispatch with theirs (refusal.go).
func (updating) failure() (string, state.FailureMessage) {
	return arm.CodeInternalServerError, state.Merged
}

// dispatch PATCHes what an update may change and moves the
// operation (and its resource) to Updating, the marker that the PATCH was
// sent. CS refusing while the object or its cluster is busy (as CS's
// objects show, csrefusal.go) is retried later, as ARO-HCP does. A crash before the marker repeats the PATCH,
// which sends the same values.
func (u updating) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	k := u.k
	href := j.res.ClusterServiceID()
	if href == "" {
		found, err := u.unrecorded(ctx, r, j, k)
		if err != nil {
			return outcomeSkipped, err
		}
		if found == "" {
			return outcomeSkipped, r.failNeverCreated(ctx, j)
		}
		href = found
	}
	if err := k.patch(ctx, j, href); err != nil {
		return outcomeSkipped, fmt.Errorf("updating %s %s: %w", j.kind, href, u.e.refusedAbout(ctx, href, err, k.noun(), "update"))
	}
	if _, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateUpdating, nil); err != nil {
		return outcomeSkipped, fmt.Errorf("marking the update of %s %s sent: %w", j.kind, href, err)
	}
	return outcomeDispatched, nil
}

// poll reads the object once: its state, and whether CS already carries
// what the update asked for (the spec source is Updating until it does,
// so the worst of the two is).
func (u updating) poll(ctx context.Context, j *job) (pollResult, error) {
	k := u.k
	href := j.res.ClusterServiceID()
	if href == "" {
		href = j.op.Properties.InternalID // written by an earlier hcpops
	}
	states, err := k.spec(ctx, j, href)
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(states...), nil
}

// unrecorded is the CS object a create made without recording it (its
// POST landed after the create stopped waiting for it, or the create was
// superseded meanwhile), recorded now as the resource's: at the pending
// ID a cluster's create chose, or at a child's href. "" when there is no
// such ID. CS's own 404 is no proof by itself (a misroute reads the same;
// seed 60168): at a cluster's pending ID the update waits, and its
// deadline ends it; at a child's href it waits out a create POST that may
// still land, then is held for the tick's absence verdict (absence.go),
// which fails it as never created once CS's other answers corroborate it.
func (u updating) unrecorded(ctx context.Context, r *run, j *job, k kind) (string, error) {
	href := j.res.PendingClusterServiceID()
	_, isChild := k.(child)
	if isChild {
		var err error
		if href, err = deletion(u).liveDeleteTarget(ctx, j, k); err != nil {
			return "", err
		}
	} else if href != "" && u.e.clock().Sub(pendingChosenAt(j)) < u.e.cfg.PendingIDGrace {
		return "", retryLater("the cluster's create may still be landing at %s", href)
	}
	if href == "" {
		return "", nil
	}
	_, err := k.status(ctx, j, href)
	switch cs.Classify(err) {
	case cs.Answered:
	case cs.Absent:
		if !isChild {
			return "", retryLater("clusters service answers 404 at %s, where the create POSTed: no proof it was never created", href)
		}
		if until, ok := deletion(u).createMayLand(j, href); ok {
			return "", retryLater("a create POST for %s may still reach clusters service until %s", href, until.UTC().Format(time.RFC3339))
		}
		r.wave.holdDispatch(j, href, failsNeverCreated())
		return "", retryLater("clusters service answered its own 404 at %s: not failed as never created until another answer corroborates it", href)
	default:
		return "", fmt.Errorf("reading what the create of %s made at %s: %w", j.res.ResourceID(), href, err)
	}
	j.log.InfoContext(ctx, "clusters service has the object the create made but did not record; recording it", "cluster_service_id", href)
	if err := u.e.recordClusterServiceID(ctx, j, href); err != nil {
		return "", err
	}
	return href, nil
}

// failNeverCreated WRITES a Failed status: a resource CS never had (its
// create failed before the POST, or its cluster has no CS object, or CS's
// 404 where it would be is corroborated) can never be updated, so its
// update fails instead of waiting forever.
func (r *run) failNeverCreated(ctx context.Context, j *job) error {
	j.log.WarnContext(ctx, "resource has no clusters service object; failing the update")
	_, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, &arm.CloudErrorBody{
		Code:    arm.CodeInternalServerError,
		Message: fmt.Sprintf("The %s was never created, so it cannot be updated.", j.kind),
	})
	return err
}
