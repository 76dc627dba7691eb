package triggerhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// Feed is the change feed a cosmosDBTrigger reads; every store.Store is one.
type Feed interface {
	ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error)
}

// feedListener pumps the change feed into one cosmosDBTrigger function, one
// batch at a time, like the change feed processor on a single lease. After a
// batch the lease is checkpointed once the handler answered 2xx, or once
// the retry policy is spent (without one, after the first failure): the
// real trigger does not redeliver a failed batch.
type feedListener struct {
	host      *Host
	fn        functionapp.Function
	binding   functionapp.Binding
	pollDelay time.Duration
	reader    *changefeed.Reader
	// leaseName is the lease prefix and the function name, so two functions
	// on one feed keep separate positions.
	leaseName string
	lease     Lease
	// rng draws FeedFaults' reorders; nil when there are none.
	rng *rand.Rand
}

// run pumps from cont, a position from startPosition, until ctx ends; it
// gives the lease up when it stops.
func (l *feedListener) run(ctx context.Context, cont string) error {
	h := l.host
	defer l.release()
	h.logger.LogAttrs(ctx, slog.LevelInfo, "change feed listening", slog.String("function", l.fn.Name),
		slog.String("lease", l.leaseName), slog.Int("max_items", l.binding.MaxItemsPerInvocation), slog.Duration("poll_delay", l.pollDelay))
	for ctx.Err() == nil {
		page, err := l.reader.Read(ctx, cont)
		switch {
		case errors.Is(err, changefeed.ErrGap):
			if cont, err = l.restart(ctx, err); err != nil {
				return err
			}
			continue
		case err != nil:
			if ctx.Err() == nil {
				h.logger.LogAttrs(ctx, slog.LevelWarn, "reading the change feed failed", slog.String("function", l.fn.Name), slog.Any("error", err))
			}
			l.sleep(ctx)
			continue
		case len(page.Changes) == 0:
			cont = page.Next // an idle feed's position may still move on
			if err := l.renew(ctx, cont); err != nil {
				return err
			}
			l.sleep(ctx)
			continue
		}
		batches := []changefeed.Page{page}
		if l.rng != nil && l.rng.Float64() < h.faults.Reorder {
			// Held back: the next batch, when there is one, goes first.
			next, err := l.reader.Read(ctx, page.Next)
			if err == nil && len(next.Changes) > 0 {
				batches = []changefeed.Page{next, page}
				h.stats.reordered.Add(1)
			}
		}
		for _, b := range batches {
			if err := l.deliver(ctx, b.Changes); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil // shutting down: no checkpoint, the batch comes again
			}
		}
		cont = batches[0].Next // the furthest read, even when reordered
		if err := l.checkpoint(ctx, cont); err != nil {
			return err
		}
	}
	return nil
}

// restart answers a position the store refused: the changes since are out
// of reach, so the listener starts again where the binding says and leaves
// what it missed to the tick's safety net, saying so once.
func (l *feedListener) restart(ctx context.Context, gap error) (string, error) {
	start := l.start()
	l.host.logger.LogAttrs(ctx, slog.LevelError, "change feed lease position refused; starting again from the binding's start",
		slog.String("function", l.fn.Name), slog.String("lease", l.leaseName), slog.String("start", start.String()), slog.Any("error", gap))
	cont, err := l.reader.Begin(ctx, start)
	if err != nil {
		return "", fmt.Errorf("function %s: %w", l.fn.Name, err)
	}
	return cont, l.checkpoint(ctx, cont)
}

// renew rewrites the lease when its renew interval has passed, so an idle
// listener keeps it; it also keeps the position an idle read moved to.
func (l *feedListener) renew(ctx context.Context, cont string) error {
	if l.host.clock.Now().Sub(l.lease.Renewed) < l.host.leaseRenew {
		return nil
	}
	return l.checkpoint(ctx, cont)
}

// deliver invokes the function with one batch (twice under
// FeedFaults.Duplicate). A failed batch is logged and left behind: the
// real trigger does not redeliver it. Only a batch that cannot be encoded
// is an error.
func (l *feedListener) deliver(ctx context.Context, items []store.Item) error {
	h := l.host
	docs, err := EncodeDocuments(items)
	if err != nil {
		return fmt.Errorf("function %s: %w", l.fn.Name, err)
	}
	h.stats.batches.Add(1)
	times := 1
	if h.faults.duplicate() {
		times = 2
	}
	for i := range times {
		if i > 0 {
			h.stats.duplicated.Add(1)
		}
		h.stats.deliveries.Add(1)
		err := h.invokeWithPolicy(ctx, l.fn, map[string]json.RawMessage{l.binding.Name: docs})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			h.logger.LogAttrs(ctx, slog.LevelError, "change feed batch failed; checkpointing past it",
				slog.String("function", l.fn.Name), slog.Int("documents", len(items)))
		}
	}
	return nil
}

func (l *feedListener) sleep(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-l.host.clock.After(l.pollDelay):
	}
}

// start is where the binding begins a feed without a lease: the
// beginning, a time, or (by default) now.
func (l *feedListener) start() changefeed.Start {
	switch {
	case l.binding.StartFromBeginning:
		return changefeed.FromBeginning()
	case !l.binding.StartFromTime.IsZero():
		return changefeed.FromTime(l.binding.StartFromTime)
	}
	return changefeed.FromNow()
}

// startPosition takes the lease and resumes from it, or on a first start
// begins where the binding says and records that in a new lease.
func (l *feedListener) startPosition(ctx context.Context) (string, error) {
	found, err := l.acquire(ctx)
	if err != nil {
		return "", err
	}
	if found {
		l.host.logger.LogAttrs(ctx, slog.LevelInfo, "change feed resuming from lease", slog.String("function", l.fn.Name),
			slog.String("lease", l.leaseName))
		return l.lease.Continuation, nil
	}
	cont, err := l.reader.Begin(ctx, l.start())
	if err != nil {
		return "", fmt.Errorf("function %s: %w", l.fn.Name, err)
	}
	return cont, l.checkpoint(ctx, cont)
}

// EncodeDocuments renders a change-feed page as the host hands it to a
// custom handler (events.EncodeDocuments).
func EncodeDocuments(items []store.Item) (json.RawMessage, error) {
	bodies := make([][]byte, len(items))
	for i, it := range items {
		bodies[i] = it.Body
	}
	return events.EncodeDocuments(bodies)
}
