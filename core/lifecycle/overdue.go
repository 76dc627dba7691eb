package lifecycle

import (
	"context"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// No deadline overrides CS's word that the work is under way. A deadline
// bounds how long hcpops waits without such a word: work CS was never
// given (not dispatched), work CS says nothing of or is not doing (a
// cluster waiting on the customer, an upgrade CS lists no policy for, a
// policy delayed), and work CS cannot be asked about (its reads failing or
// unrecognized when the deadline is checked). Those fail at the deadline
// as before. An operation whose poll at or past its deadline reads CS's
// own word that the change is in progress is held instead: it keeps the
// status CS's word gives it, one operation.stuck record says it is past
// its deadline and why (the stuck alert fires on it, `hcpopsctl ops`
// shows the deadline passed), and it ends when CS ends the work, or when
// an operator ends it with `hcpopsctl ops fail`. The hold is decided
// afresh on every poll: once CS stops saying the work is under way, the
// deadline fails it on that poll.

// underWay says whether a CS object's state is CS's word that the change
// request asks for is in progress.
func underWay(r document.Request, csState string) bool {
	switch r {
	case document.RequestCreate:
		switch csState {
		case cs.ClusterStateValidating, cs.ClusterStatePending, cs.ClusterStateInstalling:
			return true // node pools spell these the same
		}
	case document.RequestUpdate:
		switch csState {
		case cs.ClusterStateUpdating, cs.NodePoolStateValidatingUpdate, cs.NodePoolStatePendingUpdate:
			return true
		}
	case document.RequestDelete:
		return csState == cs.ClusterStateUninstalling
	}
	return false
}

// policyUnderWay says whether an upgrade policy's state is CS's word that
// the upgrade is under way: delayed is not (CS put it off), nor an ended
// or unknown one.
func policyUnderWay(s string) bool {
	switch s {
	case cs.UpgradePolicyStatePending, cs.UpgradePolicyStateScheduled, cs.UpgradePolicyStateStarted:
		return true
	}
	return false
}

// working is the first of a poll's sources that is CS's word that the
// change is under way; nil when none is.
func working(states []*state.OperationState) *state.OperationState {
	for _, s := range states {
		if s != nil && s.UnderWay && !s.ProvisioningState.IsTerminal() {
			return s
		}
	}
	return nil
}

// holdOverdue writes, once an operation, the operation.stuck record of an
// operation past its deadline that CS says it is working on.
func (e *Engine) holdOverdue(ctx context.Context, j *job, deadline time.Time, word *state.OperationState) {
	if !e.overdue.first(docRef(j.op), "overdue") {
		return
	}
	age := e.clock().Sub(j.op.Properties.StartTime)
	own := e.cfg.StuckAfter[StuckKey{j.kind, j.op.Properties.Request}]
	csID := j.op.Properties.InternalID
	if csID == "" && j.res != nil {
		csID = j.res.ClusterServiceID()
	}
	j.log.LogAttrs(ctx, slog.LevelWarn, MsgStuck,
		slog.String("kind", j.kind.String()),
		slog.String("status", string(j.op.Properties.Status)),
		slog.Float64("seconds_since_start", age.Seconds()),
		slog.Float64("threshold_seconds", deadline.Sub(j.op.Properties.StartTime).Seconds()),
		slog.Float64("stuck_after_seconds", own.Seconds()),
		slog.String("cluster_service_id", csID),
		slog.String("deadline", deadline.UTC().Format(time.RFC3339)),
		slog.Bool("past_deadline", true),
		slog.String("cs_source", word.Source),
		slog.String("cs_word", word.Message))
}

// lastWord is CS's last word on an operation whose poll now got no word
// at all (a hang, a body not CS's, a retryable status): the status the
// engine last wrote on CS's word that the work was under way — Updating
// (CS accepted the PATCH or the upgrade) or Provisioning (CS said it was
// installing). No such answer says CS stopped, so it holds the operation
// past its deadline as CS's word would; CS's own refusal is an answer,
// and decides. So is CS's own 404, once released (wave_hold.go): until
// then the tick holds a 404 for an object CS accepted work on as no
// evidence, and it is no word either. A delete's Deleting is the
// frontend's, not CS's word, so a delete gets no hold from it.
// The simulation found an update failed at its deadline while a third of
// CS's answers came from a cache keyed without the id (seed 40534), and
// while a third of reads were misrouted to CS's own 404 (seed 10371).
func (e *Engine) lastWord(j *job, pollErr error) *state.OperationState {
	switch cs.Classify(pollErr) {
	case cs.Unrecognized, cs.Failed, cs.Unavailable:
	case cs.Absent:
		if j.op.Properties.Request == document.RequestDelete || e.unconfirmed.isReleased(docRef(j.op)) {
			return nil
		}
	default:
		return nil
	}
	switch st := j.op.Properties.Status; st {
	case arm.ProvisioningStateUpdating, arm.ProvisioningStateProvisioning:
		if !j.h.dispatched(j) {
			return nil
		}
		return state.NewOperationState(st, "clusters service's last word: "+string(st)+"; this poll got none").
			WithSource("lastWord")
	}
	return nil
}
