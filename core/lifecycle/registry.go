package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// handlerKey selects the handler of an operation: its request and the kind
// of its target resource (the cluster, for credential requests).
type handlerKey struct {
	request document.Request
	kind    document.Kind
}

// outcome is what one dispatch attempt did. A dispatcher that cannot
// proceed yet says so with retryLater; only dispatchOne turns that into
// outcomeDeferred, so deferral has one signal.
type outcome int

const (
	outcomeSkipped    outcome = iota // nothing to do: done already, or not ours
	outcomeDispatched                // the CS call was made (or adopted) and recorded
	outcomeDeferred                  // cannot proceed yet; a later tick retries
)

// pollResult is what one poll learned: the operation's state by source
// (see verdict), or that the object is gone.
type pollResult struct {
	states []*state.OperationState
	// gone: CS no longer has the object, so a delete is complete.
	gone bool
}

// polledStates is the pollResult of these sources.
func polledStates(states ...*state.OperationState) pollResult { return pollResult{states: states} }

// handler is everything the engine knows about one (request, kind) pair.
// The per-kind work is in the job's adapter; a handler is per request.
type handler struct {
	// noun names the work in deadline messages ("cluster creation").
	noun string
	// dispatched reports whether the CS call was made and recorded; j.res
	// is never nil here.
	dispatched func(j *job) bool
	// dispatch makes the CS call; t counts the status writes and
	// notifications it makes on the way.
	dispatch func(ctx context.Context, j *job, t *tally) (outcome, error)
	poll     func(ctx context.Context, j *job) (pollResult, error)
	// deadline, when set, is when the operation must be terminal; a zero
	// time means this operation has none.
	deadline func(j *job) time.Time
	// failCode and wording say how a Failed verdict is written: upstream's
	// code for the request, and whether its message is the merged one
	// (creates and updates) or the failing source's own (the rest).
	failCode string
	wording  state.FailureMessage
}

// verdict decides the operation's state from its sources and the error
// to write with it.
func (h *handler) verdict(j *job, r pollResult) (arm.ProvisioningState, *arm.CloudErrorBody, error) {
	d, err := state.Decide(h.failCode, h.wording, r.states...)
	if err != nil {
		return "", nil, fmt.Errorf("deciding the state of operation %s: %w", j.op.Name(), err)
	}
	if d.State != j.op.Properties.Status && j.log.Enabled(context.Background(), slog.LevelDebug) {
		j.log.Debug("determined operation state", "state", d.State, "message", d.Message(), "sources", len(d.Sources))
	}
	return d.State, d.Error, nil
}

// registry is the one table of (request, kind) pairs the engine serves:
// create, update and delete of every kind with an adapter, and the
// credential requests on a cluster.
func (e *Engine) registry() map[handlerKey]*handler {
	created := func(j *job) bool { return j.res.ClusterServiceID() != "" }
	// An update's PATCH moves it out of Accepted (an internalId is what
	// hcpops wrote before it stopped writing one there).
	patched := func(j *job) bool {
		return j.op.Properties.Status != arm.ProvisioningStateAccepted || j.op.Properties.InternalID != ""
	}
	// A certificate-signing request is never dispatched as break-glass
	// (an earlier hcpops did so): its dispatch refuses it.
	credentialRequested := func(j *job) bool {
		return j.op.Properties.InternalID != "" && j.op.Properties.SystemAdminCredentialRequest == nil
	}
	// A legacy delete was sent to CS by the frontend that wrote it.
	deleteStamped := func(j *job) bool {
		if legacyDelete(j) {
			return true
		}
		_, ok := j.res.ClusterServiceDeletionTimestamp()
		return ok
	}
	createBy := func(j *job) time.Time {
		if t, ok := j.res.CreateOperationCompletionDeadline(); ok {
			return t
		}
		return j.op.Properties.StartTime.Add(e.cfg.CreateDeadline)
	}
	deleteBy := func(j *job) time.Time {
		if legacyDelete(j) {
			return time.Time{} // ARO-HCP's legacy path has no deadline
		}
		if j.res != nil {
			if t, ok := j.res.DeleteOperationCompletionDeadline(); ok {
				return t
			}
		}
		return j.op.Properties.StartTime.Add(e.cfg.DeleteDeadline)
	}
	const ise, irc = arm.CodeInternalServerError, arm.CodeInvalidRequestContent
	m := map[handlerKey]*handler{}
	for kind, a := range e.kinds {
		m[handlerKey{document.RequestCreate, kind}] = &handler{noun: a.noun + " creation", dispatched: created,
			dispatch: e.dispatchCreate, poll: e.pollCreate, deadline: createBy, failCode: ise, wording: state.Merged}
		m[handlerKey{document.RequestUpdate, kind}] = &handler{noun: a.noun + " update", dispatched: patched,
			dispatch: e.dispatchUpdate, poll: e.pollUpdate, failCode: irc, wording: state.Merged}
		m[handlerKey{document.RequestDelete, kind}] = &handler{noun: a.noun + " deletion", dispatched: deleteStamped,
			dispatch: e.dispatchDelete, poll: e.pollDelete, deadline: deleteBy, failCode: ise, wording: state.Bare}
	}
	m[handlerKey{document.RequestRequestCredential, document.KindCluster}] = &handler{noun: "credential request",
		dispatched: credentialRequested, dispatch: e.dispatchRequestCredential, poll: e.pollRequestCredential,
		failCode: ise, wording: state.Bare}
	m[handlerKey{document.RequestRevokeCredentials, document.KindCluster}] = &handler{noun: "credential revocation",
		dispatched: func(j *job) bool { return j.op.Properties.Status != arm.ProvisioningStateAccepted },
		dispatch:   e.dispatchRevokeCredentials, poll: e.pollRevokeCredentials, failCode: ise, wording: state.Bare}
	return m
}

// deadlineError is the error recorded on an operation that ran out of time.
func deadlineError(noun string, deadline time.Time) *arm.CloudErrorBody {
	return &arm.CloudErrorBody{
		Code:    arm.CodeInternalServerError,
		Message: fmt.Sprintf("%s did not complete before the deadline %s", noun, deadline.UTC().Format(time.RFC3339)),
	}
}

// supersededError is what ARO-HCP's CancelOperation records.
func supersededError() *arm.CloudErrorBody {
	return &arm.CloudErrorBody{Code: arm.CodeCanceled, Message: "This operation was superseded by another"}
}

// tally counts what a tick or a dispatch batch did; goroutines share it.
type tally struct {
	polled, changed, dispatched, expired, canceled, notified, errors, backedOff, skipped atomic.Int64

	mu    sync.Mutex
	skips map[string]int // by reason
}

// skip counts an operation left alone for reason.
func (t *tally) skip(reason string) {
	t.skipped.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.skips == nil {
		t.skips = map[string]int{}
	}
	t.skips[reason]++
}

func (t *tally) tickResult() TickResult {
	reasons := make(map[string]int, len(skipReasons))
	t.mu.Lock()
	for _, r := range skipReasons {
		reasons[r] = t.skips[r]
	}
	t.mu.Unlock()
	return TickResult{
		Polled:         int(t.polled.Load()),
		Changed:        int(t.changed.Load()),
		Dispatched:     int(t.dispatched.Load()),
		Expired:        int(t.expired.Load()),
		Canceled:       int(t.canceled.Load()),
		Notified:       int(t.notified.Load()),
		Errors:         int(t.errors.Load()),
		BackedOff:      int(t.backedOff.Load()),
		Skipped:        int(t.skipped.Load()),
		SkippedReasons: reasons,
	}
}
