package triggerhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/devhost/functionapp"
)

// Feed is the change feed a cosmosDBTrigger reads; every store.Store is one.
type Feed interface {
	ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error)
}

// lease is the persisted position of one function in the change feed.
type lease struct {
	Continuation string    `json:"continuation"`
	Updated      time.Time `json:"updated"`
}

// feedListener pumps the change feed into one cosmosDBTrigger function, one
// batch at a time, like the change feed processor on a single lease. After a
// batch the lease is checkpointed whether the invocation succeeded or its
// retries ran out: the real trigger does not redeliver a failed batch.
type feedListener struct {
	host      *Host
	fn        functionapp.Function
	binding   functionapp.Binding
	pollDelay time.Duration
	// leaseName is the lease prefix and the function name, so two functions
	// on one feed keep separate positions.
	leaseName string
	// rng draws FeedFaults' reorders; nil when there are none.
	rng *rand.Rand
}

// run pumps from cont, a position from startPosition.
func (l *feedListener) run(ctx context.Context, cont string) error {
	h := l.host
	h.logger.LogAttrs(ctx, slog.LevelInfo, "change feed listening", slog.String("function", l.fn.Name),
		slog.Int("max_items", l.binding.MaxItemsPerInvocation), slog.Duration("poll_delay", l.pollDelay))
	for ctx.Err() == nil {
		page, err := h.feed.ChangeFeed(ctx, cont, l.binding.MaxItemsPerInvocation)
		if err != nil {
			if ctx.Err() == nil {
				h.logger.LogAttrs(ctx, slog.LevelWarn, "reading the change feed failed", slog.String("function", l.fn.Name), slog.Any("error", err))
			}
			l.sleep(ctx)
			continue
		}
		if len(page.Items) == 0 {
			l.sleep(ctx)
			continue
		}
		batches := []store.FeedPage{page}
		if l.rng != nil && l.rng.Float64() < h.faults.Reorder {
			// Held back: the next batch, when there is one, goes first.
			next, err := h.feed.ChangeFeed(ctx, page.Continuation, l.binding.MaxItemsPerInvocation)
			if err == nil && len(next.Items) > 0 {
				batches = []store.FeedPage{next, page}
				h.stats.reordered.Add(1)
			}
		}
		for _, b := range batches {
			if err := l.deliver(ctx, b.Items); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil // shutting down: no checkpoint, the batch comes again
			}
		}
		cont = batches[0].Continuation // the furthest read, even when reordered
		if err := l.checkpoint(cont); err != nil {
			return err
		}
	}
	return nil
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

func (l *feedListener) checkpoint(cont string) error {
	err := l.host.state.save("leases", l.leaseName, lease{Continuation: cont, Updated: l.host.clock.Now().UTC()})
	if err != nil {
		return fmt.Errorf("checkpointing function %s: %w", l.fn.Name, err)
	}
	return nil
}

// startPosition resumes from the lease, or on a first start begins where
// the binding says: the beginning, a time, or (by default) now.
func (l *feedListener) startPosition(ctx context.Context) (string, error) {
	var ls lease
	found, err := l.host.state.load("leases", l.leaseName, &ls)
	if err != nil {
		return "", fmt.Errorf("function %s: %w", l.fn.Name, err)
	}
	if found {
		l.host.logger.LogAttrs(ctx, slog.LevelInfo, "change feed resuming from lease", slog.String("function", l.fn.Name))
		return ls.Continuation, nil
	}
	cont := ""
	switch {
	case l.binding.StartFromBeginning:
	case !l.binding.StartFromTime.IsZero():
		cont, err = l.skip(ctx, 1, func(it store.Item) bool { return itemTime(it).Before(l.binding.StartFromTime) })
	default:
		cont, err = l.skip(ctx, 1000, func(store.Item) bool { return true })
	}
	if err != nil {
		return "", fmt.Errorf("function %s: finding the start of the change feed: %w", l.fn.Name, err)
	}
	return cont, l.checkpoint(cont)
}

// skip advances past items while before says so, page by page.
func (l *feedListener) skip(ctx context.Context, pageSize int, before func(store.Item) bool) (string, error) {
	cont := ""
	for {
		page, err := l.host.feed.ChangeFeed(ctx, cont, pageSize)
		if err != nil {
			return "", err
		}
		for _, it := range page.Items {
			if !before(it) {
				return cont, nil
			}
		}
		if len(page.Items) == 0 {
			return cont, nil
		}
		cont = page.Continuation
	}
}

func itemTime(it store.Item) time.Time {
	var sys struct {
		TS int64 `json:"_ts"`
	}
	_ = json.Unmarshal(it.Body, &sys)
	return time.Unix(sys.TS, 0)
}

// EncodeDocuments renders a batch the way the host hands it to a custom
// handler: the extension makes the documents one compact JSON array string,
// the host serializes that string again, and the envelope encodes the result
// as a JSON string value, so Data.<name> is a string holding a string
// holding the array.
func EncodeDocuments(items []store.Item) (json.RawMessage, error) {
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			arr.WriteByte(',')
		}
		if err := json.Compact(&arr, it.Body); err != nil {
			return nil, fmt.Errorf("change feed document %d is not JSON: %w", i, err)
		}
	}
	arr.WriteByte(']')
	inner, err := jsonString(arr.String())
	if err != nil {
		return nil, err
	}
	return jsonString(string(inner))
}

// jsonString encodes s as a JSON string without HTML escaping, as
// Newtonsoft writes it.
func jsonString(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding documents: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
