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

// pair is the work of one (request, kind) the engine serves: one row of
// the table below, naming its steps. Each step is written out once, where
// what it decides lives: what every request of a kind shares (create.go,
// update.go, delete.go, each bound to its kind's CS calls in cluster.go,
// nodepool.go, externalauth.go), and what only one pair does in a file of
// its own (cluster_create.go, cluster_delete.go, externalauth_create.go,
// credential_request.go, credential_revoke.go), with its table-driven test
// beside it. docs/decisions/lifecycle-shape.md says why a table and not a
// type per pair.
//
// The order the steps run in is the engine's, the same for every row: the
// tick (advance, tick.go) asks dispatched; the deadline (the request's
// rule, the same for every kind: deadline.go), first for work
// not yet dispatched; dispatch, or else poll, whose states verdict decides
// with failure's code and wording and updateOperationStatus
// (statuswrite.go) writes, the deadline checked after it while the answer
// is not terminal (held, not failed, while a source is CS's word that the
// work is under way: overdue.go); a delete whose object CS no longer has
// is completed (completeDelete, delete.go). A change-feed batch only
// dispatches (dispatchOne, dispatch.go). So the rules that keep a terminal
// state true hold for every pair alike.
type pair struct {
	// work names it in deadline messages ("cluster creation").
	work string
	// dispatched reports whether the CS call was made and recorded; j.res
	// is never nil here.
	dispatched func(j *job) bool
	// dispatch makes the CS call; r, the batch or tick it runs in, counts
	// the status writes and notifications it makes on the way. A dispatch
	// that cannot proceed yet says so with retryLater.
	dispatch func(ctx context.Context, r *run, j *job) (outcome, error)
	// poll reads what CS says of the dispatched work.
	poll func(ctx context.Context, j *job) (pollResult, error)
	// failure says how a Failed verdict is written: upstream's code for
	// the request, and whether its message is the merged one (creates and
	// updates) or the failing source's own (the rest).
	failure func() (code string, wording state.FailureMessage)
}

// handlerKey selects the pair of an operation: its request and the kind
// of its target resource (the cluster, for credential requests).
type handlerKey struct {
	request document.Request
	kind    document.Kind
}

// registry is the one table of (request, kind) pairs the engine serves:
// create, update and delete of each kind of resource, and the credential
// requests on a cluster.
func (e *Engine) registry() map[handlerKey]*pair {
	up := upgrades{cs: e.cs, store: e.store, clock: e.clock,
		reads: newPolicyReads(e.cfg.NotifyScheduleSize)}
	// Pointers: a step hands its kind to the shared steps as an
	// interface, which copied the struct to the heap on every poll.
	c, np, ea := &cluster{e.cs, up}, &nodePool{e.cs, up}, &externalAuth{e.cs}
	return map[handlerKey]*pair{
		// The CS cluster, created exactly once (cluster_create.go); its
		// status read until it is ready and runs the version asked.
		{document.RequestCreate, document.KindCluster}: row("cluster creation", clusterCreate{creation{e, c}, c}),
		// The PATCH, and a control plane upgrade for a version change;
		// done when CS's cluster is ready, carries the fields and runs the
		// version asked.
		{document.RequestUpdate, document.KindCluster}: row("cluster update", updating{e, c}),
		// The DELETE; done on CS's 404, confirmed (absence.go), and on the
		// legacy path once the children's documents are gone too
		// (cluster_delete.go).
		{document.RequestDelete, document.KindCluster}: row("cluster deletion", clusterDelete{deletion{e, c}}),
		// The POST under its cluster once that is in CS, at its lower-cased
		// name; its status read until it is ready.
		{document.RequestCreate, document.KindNodePool}: row("node pool creation", childCreation{creation{e, np}, np}),
		// The upgrade a version change needs (bounded by the control
		// plane's version), then the PATCH of replicas and labels; done when
		// the node pool is ready, carries them and runs the version asked.
		{document.RequestUpdate, document.KindNodePool}: row("node pool update", updating{e, np}),
		// The DELETE (a cluster CS shows uninstalling means it is under
		// way); done on CS's 404, confirmed.
		{document.RequestDelete, document.KindNodePool}: row("node pool deletion", deletion{e, np}),
		// The POST under its cluster; done once the object exists, unless
		// CS says it is in error (externalauth_create.go).
		{document.RequestCreate, document.KindExternalAuth}: row("external auth creation", externalAuthCreate{childCreation{creation{e, ea}, ea}, ea}),
		// The PATCH of its issuer and clients; done when CS carries them.
		// It has no deadline, as upstream's.
		{document.RequestUpdate, document.KindExternalAuth}: row("external auth update", updating{e, ea}),
		// The DELETE; done on CS's 404, confirmed.
		{document.RequestDelete, document.KindExternalAuth}: row("external auth deletion", deletion{e, ea}),
		// A break-glass credential from CS (credential_request.go).
		{document.RequestRequestCredential, document.KindCluster}: row("credential request", credentialRequest{e}),
		// CS's revocation of every credential (credential_revoke.go).
		{document.RequestRevokeCredentials, document.KindCluster}: row("credential revocation", credentialRevoke{e}),
	}
}

// steps are the four steps of a pair, written once by the value that
// decides them: a request's shared steps bound to a kind (creation,
// updating, deletion), or a type that does one of them its own way and
// takes the rest from one of those.
type steps interface {
	dispatched(j *job) bool
	dispatch(ctx context.Context, r *run, j *job) (outcome, error)
	poll(ctx context.Context, j *job) (pollResult, error)
	failure() (string, state.FailureMessage)
}

// row is the table's row of the pair whose work is named work.
func row(work string, s steps) *pair {
	return &pair{work: work, dispatched: s.dispatched, dispatch: s.dispatch, poll: s.poll, failure: s.failure}
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
