package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// tick streams the active operations (and terminal ones still owing ARM a
// notification) page by page into PollConcurrency workers. The page
// callback blocks while every worker is busy, so the tick never holds more
// than a page and the workers' queue in memory.
func (e *Engine) tick(ctx context.Context) (TickResult, error) {
	t := &tally{}
	work := make(chan store.Item)
	var wg sync.WaitGroup
	for range e.cfg.PollConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				e.tickOne(ctx, it, t)
			}
		}()
	}
	q := store.ActiveOperationsQuery{WithPendingNotification: true, PageSize: e.cfg.PageSize}
	err := e.store.ActiveOperations(ctx, q, func(items []store.Item) error {
		for _, it := range items {
			select {
			case work <- it:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	close(work)
	wg.Wait()
	res := t.tickResult()
	if err == nil {
		err = ctx.Err() // workers may have been cut short after the last page
	}
	if err != nil {
		return res, fmt.Errorf("poll tick: %w", err)
	}
	return res, nil
}

// tickOne moves one operation as far as it can go this tick. Its errors
// are counted and logged, never returned: one operation must not stop the
// others.
func (e *Engine) tickOne(ctx context.Context, it store.Item, t *tally) {
	if ctx.Err() != nil {
		return
	}
	t.polled.Add(1)
	op, err := document.ParseOperation(it.Body)
	if err != nil {
		t.errors.Add(1)
		withInvocation(ctx, e.log).Error("skipping a malformed operation document", "error", err)
		return
	}
	if op.Properties.Status.IsTerminal() {
		if op.Properties.NotificationURI != "" {
			e.retryNotification(ctx, op, t)
		}
		return
	}
	j, err := e.newJob(ctx, op)
	if err == nil {
		err = e.advance(ctx, j, t)
	}
	switch {
	case err == nil:
	case errors.Is(err, errRetryLater):
		t.errors.Add(1)
		e.logFor(ctx, op).Info("operation left for the next tick", "reason", err)
	case ctx.Err() != nil:
		// The tick ran out of budget; the next one picks up from the store.
	default:
		t.errors.Add(1)
		e.logFor(ctx, op).Warn("operation poll failed; the next tick retries", "error", err)
	}
}

// advance is one step of the safety net and the poll for a live
// operation: finish deletes whose resource is gone, cancel superseded
// operations, dispatch what the change feed missed, enforce deadlines,
// then poll CS and record what it says.
func (e *Engine) advance(ctx context.Context, j *job, t *tally) error {
	op := j.op
	switch {
	case j.res == nil && op.Properties.Request == document.RequestDelete:
		return e.completeDelete(ctx, j, t)
	case j.res == nil, j.superseded():
		// A resource deleted or taken over by a newer request: the operation
		// can no longer finish.
		changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateCanceled, supersededError(), t)
		if changed {
			t.changed.Add(1)
			t.canceled.Add(1)
			j.log.Info("operation canceled: superseded by another")
		}
		return err
	}

	now := e.clock()
	if !j.h.dispatched(j) {
		if expired, err := e.expireIfLate(ctx, j, t, nil); expired || err != nil {
			return err
		}
		if now.Sub(op.Properties.StartTime) < e.cfg.DispatchGrace {
			return nil // the change feed should get to it first
		}
		o, err := e.dispatchOne(ctx, op.PartitionKey, op.ID, t)
		if o == outcomeDispatched {
			t.dispatched.Add(1)
			j.log.Info("dispatched an operation the change feed missed")
		}
		return err
	}

	r, pollErr := j.h.poll(ctx, j)
	if pollErr == nil && r.gone {
		return e.completeDelete(ctx, j, t)
	}
	if pollErr != nil || !r.status.IsTerminal() {
		if expired, err := e.expireIfLate(ctx, j, t, pollErr); expired || err != nil {
			return err
		}
	}
	if pollErr != nil {
		return pollErr
	}
	changed, err := e.updateOperationStatus(ctx, j, r.status, r.err, t)
	if changed {
		t.changed.Add(1)
	}
	return err
}

// expireIfLate fails an operation past its deadline. cause, when set, is
// the poll error that kept it from a verdict; the deadline holds anyway.
func (e *Engine) expireIfLate(ctx context.Context, j *job, t *tally, cause error) (bool, error) {
	if j.h.deadline == nil {
		return false, nil
	}
	deadline := j.h.deadline(j)
	if deadline.IsZero() || e.clock().Before(deadline) { // zero: none for this operation
		return false, nil
	}
	if cause != nil {
		j.log.Warn("deadline passed while clusters service could not be read", "error", cause)
	}
	changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, deadlineError(j.h.noun, deadline), t)
	if changed {
		t.changed.Add(1)
		t.expired.Add(1)
		j.log.Warn("operation failed: deadline passed", "deadline", deadline)
	}
	return true, err
}
