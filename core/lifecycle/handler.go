package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// handler is the work of one (request, kind) pair, as one of upstream's
// operation controllers is: a named type in a file of its own
// (cluster_create.go, nodepool_delete.go, credential_revoke.go...) that
// writes out each of the methods below, calling by name the steps its
// request shares (create.go, update.go, delete.go) and its kind's CS calls
// (cluster.go, nodepool.go, externalauth.go); its table-driven test sits
// beside it (cluster_create_test.go...). registry lists them all.
//
// The tick (advance, tick.go) asks them in this order: dispatched; the
// deadline, first for work not yet dispatched; dispatch, or else poll,
// whose states verdict decides with failure's code and wording and
// updateOperationStatus (statuswrite.go) writes, the deadline checked
// after it while the answer is not terminal (held, not failed, while a
// source is CS's word that the work is under way: overdue.go); a delete
// whose object CS no longer has is completed (completeDelete, delete.go).
type handler interface {
	// work names it in deadline messages ("cluster creation").
	work() string
	// dispatched reports whether the CS call was made and recorded; j.res
	// is never nil here.
	dispatched(j *job) bool
	// dispatch makes the CS call; r, the batch or tick it runs in, counts
	// the status writes and notifications it makes on the way. A dispatch that cannot proceed
	// yet says so with retryLater.
	dispatch(ctx context.Context, r *run, j *job) (outcome, error)
	// poll reads what CS says of the dispatched work.
	poll(ctx context.Context, j *job) (pollResult, error)
	// deadline is when the operation must be terminal, unless CS then
	// says the work is under way; zero: it has none.
	deadline(j *job) time.Time
	// failure says how a Failed verdict is written: upstream's code for
	// the request, and whether its message is the merged one (creates and
	// updates) or the failing source's own (the rest).
	failure() (code string, wording state.FailureMessage)
}

// handlerKey selects the handler of an operation: its request and the kind
// of its target resource (the cluster, for credential requests).
type handlerKey struct {
	request document.Request
	kind    document.Kind
}

// registry is the one table of (request, kind) pairs the engine serves:
// create, update and delete of each kind of resource, and the credential
// requests on a cluster.
func (e *Engine) registry() map[handlerKey]handler {
	up := upgrades{cs: e.cs, store: e.store, clock: e.clock,
		reads: newPolicyReads(e.cfg.NotifyScheduleSize)}
	// Pointers: a handler hands its kind to pollStatus and the like as an
	// interface, which copied the struct to the heap on every poll.
	c, np, ea := &cluster{e.cs, up}, &nodePool{e.cs, up}, &externalAuth{e.cs}
	cr := creation{e}
	return map[handlerKey]handler{
		{document.RequestCreate, document.KindCluster}:            clusterCreate{cr: cr, c: c},
		{document.RequestUpdate, document.KindCluster}:            clusterUpdate{up: updating{e}, c: c},
		{document.RequestDelete, document.KindCluster}:            clusterDelete{d: deletion{e}, c: c},
		{document.RequestCreate, document.KindNodePool}:           nodePoolCreate{cr: cr, np: np},
		{document.RequestUpdate, document.KindNodePool}:           nodePoolUpdate{up: updating{e}, np: np},
		{document.RequestDelete, document.KindNodePool}:           nodePoolDelete{d: deletion{e}, np: np},
		{document.RequestCreate, document.KindExternalAuth}:       externalAuthCreate{cr: cr, ea: ea},
		{document.RequestUpdate, document.KindExternalAuth}:       externalAuthUpdate{up: updating{e}, ea: ea},
		{document.RequestDelete, document.KindExternalAuth}:       externalAuthDelete{d: deletion{e}, ea: ea},
		{document.RequestRequestCredential, document.KindCluster}: credentialRequest{e},
		{document.RequestRevokeCredentials, document.KindCluster}: credentialRevoke{e},
	}
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
	// absent is the href CS answered its own 404 for, when that is why
	// the object is gone: the tick decides such a completion with the
	// rest of its answers (wave.go).
	absent string
}

// polledStates is the pollResult of these sources.
func polledStates(states ...*state.OperationState) pollResult { return pollResult{states: states} }

// verdict decides the operation's state from its sources and the error
// to write with it.
func verdict(ctx context.Context, j *job, r pollResult) (arm.ProvisioningState, *arm.CloudErrorBody, error) {
	code, wording := j.h.failure()
	d, err := state.Decide(code, wording, r.states...)
	if err != nil {
		return "", nil, fmt.Errorf("deciding the state of operation %s: %w", j.op.Name(), err)
	}
	if d.State != j.op.Properties.Status && j.log.Enabled(ctx, slog.LevelDebug) {
		j.log.DebugContext(ctx, "determined operation state", "state", d.State, "message", d.Message(), "sources", len(d.Sources))
	}
	return d.State, d.Error, nil
}

// deadlineError is the error recorded on an operation that ran out of time.
func deadlineError(work string, deadline time.Time) *arm.CloudErrorBody {
	return &arm.CloudErrorBody{
		Code:    arm.CodeInternalServerError,
		Message: fmt.Sprintf("%s did not complete before the deadline %s", work, deadline.UTC().Format(time.RFC3339)),
	}
}

// supersededError is what ARO-HCP's CancelOperation records.
func supersededError() *arm.CloudErrorBody {
	return &arm.CloudErrorBody{Code: arm.CodeCanceled, Message: "This operation was superseded by another"}
}
