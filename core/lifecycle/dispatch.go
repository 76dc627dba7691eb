package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// dispatchDocuments runs the dispatcher of every live operation in a
// change-feed batch, PollConcurrency at a time.
func (e *Engine) dispatchDocuments(ctx context.Context, docs []json.RawMessage) (DispatchResult, error) {
	res := DispatchResult{Documents: len(docs)}
	r := &run{Engine: e}
	log := e.log
	type target struct {
		store.DocRef
		name string
	}
	var targets []target
	seen := map[target]bool{}
	for i, raw := range docs {
		kind, err := document.Sniff(raw)
		if err != nil {
			pk, id := addressOf(raw)
			log.WarnContext(ctx, "skipping an unreadable change-feed document", "index", i, "document_id", id, "partition_key", pk, "error", err)
			continue
		}
		if kind != document.KindOperation {
			continue
		}
		res.Operations++
		op, err := document.ParseOperation(raw)
		if err != nil {
			pk, id := addressOf(raw)
			log.ErrorContext(ctx, "skipping a malformed operation document", "index", i, "document_id", id, "partition_key", pk, "error", err)
			res.Skipped++
			continue
		}
		// No store call can ever take this address: retrying the batch for
		// it would only hold the lease partition until the host gives up.
		if err := store.CheckAddress(op.PartitionKey, op.ID); err != nil {
			log.ErrorContext(ctx, "skipping an operation document that cannot be addressed", "index", i,
				"document_id", op.ID, "partition_key", op.PartitionKey, "error", err)
			res.Skipped++
			continue
		}
		// Terminal is final, so even a stale copy that says so is right.
		tg := target{store.DocRef{PartitionKey: op.PartitionKey, ID: op.ID}, op.Name()}
		if op.Properties.Status.IsTerminal() || seen[tg] {
			res.Skipped++
			continue
		}
		seen[tg] = true
		targets = append(targets, tg)
	}

	var (
		mu      sync.Mutex
		fails   []dispatchFailure
		begun   = e.clock()
		workers = e.workers(context.WithoutCancel(ctx)) // each reports its own end
	)
	for n, tg := range targets {
		if ctx.Err() != nil {
			mu.Lock()
			for _, u := range targets[n:] {
				fails = append(fails, dispatchFailure{u.DocRef, u.name, fmt.Errorf("dispatching: %w", ctx.Err())})
			}
			mu.Unlock()
			break
		}
		workers.Go(func() {
			o, err := r.dispatchOne(ctx, tg.DocRef)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errMalformed), errors.Is(err, store.ErrInvalid):
				log.ErrorContext(ctx, "skipping an operation that cannot be dispatched", "document_id", tg.ID, "partition_key", tg.PartitionKey, "error", err)
				res.Skipped++
			case err != nil:
				fails = append(fails, dispatchFailure{tg.DocRef, tg.name, err})
			case o == outcomeDispatched:
				e.pollAt.forget(tg.DocRef)
				res.Dispatched++
			case o == outcomeDeferred:
				res.Deferred++
			default:
				res.Skipped++
			}
		})
	}
	workers.Wait()
	res.Changed, res.Notified = int(r.count.changed.Load()), int(r.count.notified.Load())
	err := e.settle(ctx, fails, begun, &res) // settle fills in res
	return res, err
}

// dispatchFailure is an operation of a batch whose dispatch failed.
type dispatchFailure struct {
	store.DocRef
	name string
	err  error
}

// csEvidenceWindow is how recent an answer of a working CS must be for a
// failed call to be blamed on its object rather than on CS. In a region
// with work under way the tick asks CS every few seconds, so a minute
// without one good answer means no one can tell CS is healthy.
const csEvidenceWindow = time.Minute

// settle decides what a batch answers for the operations it failed to
// dispatch, and logs each of them once with that verdict.
//
// The batch fails (the host retries it, holding the lease partition
// meanwhile) only for a failure of a dependency as a whole: the invocation
// ran out of time; any store call failed or was throttled (every failure
// that is not a CS call's); CS could not be reached or answered 429, 502,
// 503 or 504; or no CS call in this batch, nor any other CS call of this
// engine in the last csEvidenceWindow, was answered by a working CS, so
// there is no evidence CS is healthy. Otherwise each failure was one CS
// object's (its call timed out, its answer was garbage, CS refused that
// request): it costs only that operation, which is handed to the tick's
// safety net and the batch answers 200.
//
// Either way a failed CS call starts or extends the operation's backoff,
// the one the tick keeps; the tick makes no CS call for it before that is
// due, and then dispatches it without waiting for DispatchGrace, since
// the change feed has had its turn.
func (e *Engine) settle(ctx context.Context, fails []dispatchFailure, begun time.Time, res *DispatchResult) error {
	if len(fails) == 0 {
		return nil
	}
	log := e.log
	retry, why := ctx.Err() != nil, "the invocation ran out of time"
	for _, f := range fails {
		if !retry && !objectFault(f.err) {
			retry, why = true, "a dependency failed as a whole"
		}
	}
	if !retry && !e.calls.WorkedSince(begun.Add(-csEvidenceWindow)) {
		retry, why = true, "no clusters service call answered lately"
	}
	var (
		ids  []string
		errs []error
	)
	for _, f := range fails {
		attrs := append(cs.CallAttrs(f.err), "operation_id", f.name, "document_id", f.ID, "partition_key", f.PartitionKey)
		var ce *cs.CallError
		if errors.As(f.err, &ce) {
			attrs = append(attrs, "next_attempt", e.pollAt.failed(f.DocRef, e.clock()))
		}
		attrs = append(attrs, "error", f.err)
		if retry {
			log.WarnContext(ctx, "dispatch failed; the batch is retried", append(attrs, "reason", why)...)
			ids, errs = append(ids, f.ID), append(errs, f.err)
			continue
		}
		log.WarnContext(ctx, "dispatch failed; the operation is left to the tick", attrs...)
		res.HandedOff++
	}
	return dispatchError(ids, errs)
}

// objectFault reports whether err is a failed CS call that says nothing
// about CS as a whole.
func objectFault(err error) bool {
	var ce *cs.CallError
	return errors.As(err, &ce) && cs.Classify(err) != cs.Unavailable
}

func dispatchError(ids []string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(ids)
	return &DispatchError{DocumentIDs: ids, Err: errors.Join(errs...)}
}

// addressOf reads id and partitionKey from a document that failed to
// parse, for the log line; fields that are missing or not strings are "".
func addressOf(raw json.RawMessage) (partitionKey, id string) {
	var a struct {
		ID           string `json:"id"`
		PartitionKey string `json:"partitionKey"`
	}
	_ = json.Unmarshal(raw, &a) // best effort: fills what it can
	return a.PartitionKey, a.ID
}

// dispatchOne re-reads an operation and its resource (a change-feed copy
// may be stale) and dispatches it unless that is done or not ours to do.
// Dispatches of one operation are serialised inside this process. A
// dispatcher's errRetryLater is where outcomeDeferred comes from; the run
// counts the status writes and notifications made on the way. A dispatched
// cluster create then dispatches the children waiting for it, after its
// own lock is released (deferred first, so it runs last).
func (r *run) dispatchOne(ctx context.Context, ref store.DocRef) (outcome, error) {
	var parent *job
	defer func() {
		if parent != nil {
			r.dispatchChildren(ctx, parent)
		}
	}()
	unlock, err := r.locks.lock(ctx, ref)
	if err != nil {
		return outcomeSkipped, fmt.Errorf("waiting to dispatch operation %s: %w", ref.ID, err)
	}
	defer unlock()
	op, err := r.readOperation(ctx, ref.PartitionKey, ref.ID)
	if err != nil || op == nil || op.Properties.Status.IsTerminal() {
		return outcomeSkipped, err
	}
	ctx = cs.WithNamedOperation(ctx, op)
	j, err := r.jobFor(ctx, op, pageRead{})
	if err != nil {
		return outcomeSkipped, err
	}
	// The tick decides (cancels, completes, counts the skip); a dispatch
	// only stands back.
	switch g := ownership(j); {
	case g.cancel:
		j.log.InfoContext(ctx, "resource belongs to another operation; not dispatching", "active_operation_id", j.res.ActiveOperationID())
		return outcomeSkipped, nil
	case g.skip != "":
		j.log.DebugContext(ctx, "not dispatching", "reason", g.skip)
		return outcomeSkipped, nil
	case j.res == nil:
		j.log.DebugContext(ctx, "resource is gone; nothing to dispatch")
		return outcomeSkipped, nil
	case j.h.dispatched(j):
		return outcomeSkipped, nil
	}
	o, err := j.h.dispatch(ctx, r, j)
	var refused *refusal
	switch {
	case errors.As(err, &refused):
		return outcomeSkipped, r.failRefused(ctx, j, refused)
	case errors.Is(err, errBusy):
		next := r.pollAt.failed(ref, r.clock())
		j.log.InfoContext(ctx, "dispatch deferred", "reason", err, "next_attempt", next)
		return outcomeDeferred, nil
	case errors.Is(err, errRetryLater):
		j.log.InfoContext(ctx, "dispatch deferred", "reason", err)
		return outcomeDeferred, nil
	case err != nil:
		// Logged once, by the caller: the batch or the tick.
		return outcomeSkipped, fmt.Errorf("dispatching operation %s (%s %s): %w", op.Name(), op.Properties.Request, j.kind, err)
	case o == outcomeDispatched:
		r.dispatched(ctx, j)
		parent = j
	}
	return o, nil
}
