package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// dispatchDocuments runs the dispatcher of every live operation in a
// change-feed batch, PollConcurrency at a time.
func (e *Engine) dispatchDocuments(ctx context.Context, docs []json.RawMessage) (DispatchResult, error) {
	res := DispatchResult{Documents: len(docs)}
	t := &tally{}
	log := withInvocation(ctx, e.log)
	type target struct{ pk, id, name string }
	var targets []target
	seen := map[target]bool{}
	for i, raw := range docs {
		kind, err := document.Sniff(raw)
		if err != nil {
			pk, id := addressOf(raw)
			log.Warn("skipping an unreadable change-feed document", "index", i, "document_id", id, "partition_key", pk, "error", err)
			continue
		}
		if kind != document.KindOperation {
			continue
		}
		res.Operations++
		op, err := document.ParseOperation(raw)
		if err != nil {
			pk, id := addressOf(raw)
			log.Error("skipping a malformed operation document", "index", i, "document_id", id, "partition_key", pk, "error", err)
			res.Skipped++
			continue
		}
		// No store call can ever take this address: retrying the batch for
		// it would only hold the lease partition until the host gives up.
		if err := store.CheckAddress(op.PartitionKey, op.ID); err != nil {
			log.Error("skipping an operation document that cannot be addressed", "index", i,
				"document_id", op.ID, "partition_key", op.PartitionKey, "error", err)
			res.Skipped++
			continue
		}
		// Terminal is final, so even a stale copy that says so is right.
		tg := target{op.PartitionKey, op.ID, op.Name()}
		if op.Properties.Status.IsTerminal() || seen[tg] {
			res.Skipped++
			continue
		}
		seen[tg] = true
		targets = append(targets, tg)
	}

	var (
		mu     sync.Mutex
		errs   []error
		failed []string
		wg     sync.WaitGroup
		sem    = make(chan struct{}, e.cfg.PollConcurrency)
	)
	for n, tg := range targets {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			for _, u := range targets[n:] {
				failed = append(failed, u.id)
			}
			res.Changed, res.Notified = int(t.changed.Load()), int(t.notified.Load())
			return res, dispatchError(failed, append(errs, fmt.Errorf("dispatching: %w", ctx.Err())))
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			o, err := e.dispatchOne(ctx, tg.pk, tg.id, t)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errMalformed), errors.Is(err, store.ErrInvalid):
				log.Error("skipping an operation that cannot be dispatched", "document_id", tg.id, "partition_key", tg.pk, "error", err)
				res.Skipped++
			case err != nil:
				log.Warn("dispatch failed; the batch is retried",
					append(csAttrs(err), "operation_id", tg.name, "document_id", tg.id, "retryable", cs.IsRetryable(err), "error", err)...)
				errs = append(errs, err)
				failed = append(failed, tg.id)
			case o == outcomeDispatched:
				res.Dispatched++
			case o == outcomeDeferred:
				res.Deferred++
			default:
				res.Skipped++
			}
		}()
	}
	wg.Wait()
	res.Changed, res.Notified = int(t.changed.Load()), int(t.notified.Load())
	return res, dispatchError(failed, errs)
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
// dispatcher's errRetryLater is where outcomeDeferred comes from; t counts
// the status writes and notifications made on the way.
func (e *Engine) dispatchOne(ctx context.Context, pk, id string, t *tally) (outcome, error) {
	unlock, err := e.locks.lock(ctx, pk+"/"+id)
	if err != nil {
		return outcomeSkipped, fmt.Errorf("waiting to dispatch operation %s: %w", id, err)
	}
	defer unlock()
	op, err := e.readOperation(ctx, pk, id)
	if err != nil || op == nil || op.Properties.Status.IsTerminal() {
		return outcomeSkipped, err
	}
	j, err := e.newJob(ctx, op)
	if err != nil {
		return outcomeSkipped, err
	}
	switch {
	case j.res == nil:
		j.log.Debug("resource is gone; nothing to dispatch")
		return outcomeSkipped, nil
	case j.superseded():
		j.log.Info("resource belongs to another operation; not dispatching", "active_operation_id", j.res.ActiveOperationID())
		return outcomeSkipped, nil
	case j.h.dispatched(j):
		return outcomeSkipped, nil
	}
	o, err := j.h.dispatch(ctx, j, t)
	switch {
	case errors.Is(err, errRetryLater):
		j.log.Info("dispatch deferred", "reason", err)
		return outcomeDeferred, nil
	case err != nil:
		// Logged once, by the caller: the batch or the tick.
		return outcomeSkipped, fmt.Errorf("dispatching operation %s (%s %s): %w", op.Name(), op.Properties.Request, j.kind, err)
	case o == outcomeDispatched:
		j.log.Info("operation dispatched")
	}
	return o, nil
}
