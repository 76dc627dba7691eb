// Package lifecycle moves ARO-HCP operations from Accepted to a terminal
// state: dispatch to Clusters Service, poll, atomic status writes, delete
// completion and ARM notification: Engine, the asynchronous work (a
// change-feed batch's dispatch, a timer's tick). ARM's reads of what it
// writes (status, result and the gates in front of them) are
// core/armread's. It knows nothing of Azure Functions; the functions/
// adapters call its entry points.
//
// Where things live: handler.go is the one table of (request, kind)
// pairs, each a named type in a file of its own as upstream's operation
// controllers are (cluster_create.go ... credential_revoke.go), with its
// test beside it; each writes out its dispatch, poll, deadline and
// failure, calling by name the steps its request shares (create.go,
// update.go, delete.go) and its kind's CS calls (cluster.go, nodepool.go,
// externalauth.go: the only code that tells the kinds apart). A delete
// completes on CS's 404 only once the tick corroborates it (wave.go,
// absence.go, witness.go). Every ETag-guarded read-modify-write goes
// through writeGuarded (guard.go); a status write, through
// updateOperationStatus (statuswrite.go).
package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hcpops/hcpops/core/activeset"
	"github.com/hcpops/hcpops/core/clusterservice"
)

// DispatchResult counts what one change-feed batch did.
type DispatchResult struct {
	Documents  int // documents in the batch
	Operations int // of which were operation documents
	Dispatched int // CS calls made (or adopted) and recorded
	Skipped    int // terminal, already dispatched, or not ours
	Deferred   int // cannot proceed yet (e.g. parent not in CS); the tick retries
	Changed    int // status writes made while dispatching (a revocation's Deleting, a cancel)
	Notified   int // ARM notifications delivered for operations that ended while dispatching
	HandedOff  int // CS failed for that operation alone: left to the tick's safety net
	// CS is what the batch's requests to Clusters Service came to.
	CS clusterservice.CallSummary
}

// String is the batch's counts as the function logs them; changed and
// notified appear when dispatching wrote a status.
func (r DispatchResult) String() string {
	s := fmt.Sprintf("documents=%d operations=%d dispatched=%d skipped=%d deferred=%d",
		r.Documents, r.Operations, r.Dispatched, r.Skipped, r.Deferred)
	if r.Changed > 0 || r.Notified > 0 {
		s += fmt.Sprintf(" changed=%d notified=%d", r.Changed, r.Notified)
	}
	if r.HandedOff > 0 {
		s += fmt.Sprintf(" handed_off=%d", r.HandedOff)
	}
	return s
}

// DispatchError is DispatchDocuments' error: the operation documents whose
// dispatch failed for a reason that may pass (store or CS unreachable,
// throttled, timed out), so whoever gives up on the batch can name them.
// Permanent garbage is skipped, never listed here.
type DispatchError struct {
	DocumentIDs []string // sorted
	Err         error
}

func (e *DispatchError) Error() string {
	return fmt.Sprintf("%d operations not dispatched: %v", len(e.DocumentIDs), e.Err)
}

func (e *DispatchError) Unwrap() error { return e.Err }

// TickResult counts what one poll tick did.
type TickResult struct {
	Polled     int // operations examined
	Changed    int // operations whose document was written
	Dispatched int // missed dispatches picked up
	Expired    int // failed for passing their deadline
	Canceled   int // superseded by another operation
	Notified   int // ARM notifications delivered
	Errors     int // operations that failed this tick and will be retried
	BackedOff  int // not sent to CS this tick: their CS calls kept failing
	Skipped    int // left alone by a skip rule (see skip.go)
	// SkippedReasons counts Skipped by reason; every reason is present.
	SkippedReasons map[string]int
	// VersionsRecorded counts the service-provider documents the version
	// sweep wrote (versionsweep.go).
	VersionsRecorded int
	// CS is what the tick's requests to Clusters Service came to.
	CS clusterservice.CallSummary
}

// String is the tick's counts as the function logs them.
func (r TickResult) String() string {
	return fmt.Sprintf("polled=%d changed=%d dispatched=%d expired=%d canceled=%d notified=%d errors=%d backed_off=%d skipped=%d",
		r.Polled, r.Changed, r.Dispatched, r.Expired, r.Canceled, r.Notified, r.Errors, r.BackedOff, r.Skipped)
}

// Engine is the lifecycle's entry point; build it with New. It is safe for
// concurrent use: a change-feed batch and a tick may run at the same time.
type Engine struct {
	// writer writes status and notifies ARM, as an operator's abandon
	// does with one of its own (writer.go).
	writer
	cs     clusterservice.Client
	random io.Reader
	cfg    Config

	handlers map[handlerKey]*pair
	// locks serialise dispatch of one operation inside this process; across
	// processes the etag-guarded markers do the same job.
	locks *keyedLock
	// pollAt schedules the CS calls of operations whose calls keep
	// failing, so that they cannot hold the tick's workers every tick.
	pollAt *backoff
	// calls is what the CS client's transport saw: a batch reads CS's
	// health from it to tell a sick object from a sick CS.
	calls *clusterservice.Recorder
	// skips remembers the operations logged as skipped, to log each once.
	skips *skipLog
	// unrecognized remembers the operations logged for an answer that was
	// not CS's own, to log each once until it gets a real one.
	unrecognized *skipLog
	// held remembers the deletes logged as held by a wave, to warn of
	// each once (wave.go).
	held *skipLog
	// overdue remembers the operations held past their deadline on CS's
	// word, so each is recorded stuck once (overdue.go).
	overdue *skipLog
	// stuck remembers the thresholds active operations crossed (stuck.go).
	stuck *stuckWatch
	// view is the tick's active set, kept from the change feed (source.go).
	view *activeset.View
	// unconfirmed counts the ticks 404s for objects that must exist held
	// the wave (wave_hold.go).
	unconfirmed *unconfirmed
	// absence is the confirmation windows of deletes CS answered 404 for,
	// and witness the live objects that judge them (absence.go).
	absence *absences
	witness *witnesses
	// resent counts the DELETEs sent again to objects CS shows alive.
	resent *resends
	// versions keeps service-provider versions current (versionsweep.go).
	versions *versionSweep
}

// DispatchDocuments handles one change-feed batch; non-operation documents
// are ignored. Safe to call again with the same batch. The error reports
// operations that failed because a dependency failed as a whole and should
// be retried (the host redelivers the batch); an operation whose own CS
// object failed is handed to the tick instead (see settle). Malformed
// documents, including ones no store accepts the id or partition key of,
// are logged and skipped, never retried.
func (e *Engine) DispatchDocuments(ctx context.Context, docs []json.RawMessage) (DispatchResult, error) {
	counted := e.calls.Count(ctx)
	res, err := e.dispatchDocuments(ctx, docs)
	res.CS = counted()
	return res, err
}

// Tick runs one poll pass over the active operations. Per-operation
// failures are counted in Errors and retried next tick; the error reports
// a tick that could not run or was cut short by ctx.
func (e *Engine) Tick(ctx context.Context) (TickResult, error) {
	counted := e.calls.Count(ctx)
	res, err := e.tick(ctx)
	if err == nil && e.cfg.SweepVersions {
		// After the polls, so CS's versions are as fresh as what they wrote.
		n, serr := e.versions.run(ctx, e.clock())
		res.VersionsRecorded = n
		if serr != nil {
			e.log.WarnContext(ctx, "version sweep failed; the next tick reads the page again", "error", serr)
		}
	}
	res.CS = counted()
	return res, err
}
