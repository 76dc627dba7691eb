package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/hcpops/hcpops/core/activeset"
	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Where a tick reads the active set from. Normally from the engine's view
// (package activeset), brought up to date from the change feed as the
// tick starts, so the tick reads from the store only what changed. When
// the view cannot serve (this instance's first tick, the relist interval
// passed, the feed refused its position or failed), the tick reads the
// store as every tick once did — the active-operations query and one
// ReadMany per page — and records what it read as the new view.
//
// The view only ever saves reads. Every decision a tick takes from it is
// written with If-Match on the etag it holds, so a copy gone stale meets a
// 412, is read again and decided again (writeGuarded); a resource the view
// cannot answer is read from the store.
type pollSource struct {
	e *Engine
	// fromView: pages and resources come from the view.
	fromView bool
	// rb, when reading the store, records what is read; nil when even
	// that could not start (the feed is unreachable): plain reads.
	rb    *activeset.Rebuild
	why   string
	began time.Time
}

// Reasons for a full read, in its log line.
const (
	fullReadStart  = "start"
	fullReadRelist = "relist"
	fullReadLost   = "feed_lost"
)

// MsgViewRebuilt names the record of a full read that rebuilt the view
// (docs/functions.md).
const MsgViewRebuilt = "poll.view_rebuilt"

func (e *Engine) pollSource(ctx context.Context) *pollSource {
	src := &pollSource{e: e, began: e.clock()}
	got, err := e.view.Refresh(ctx)
	log := e.log
	switch {
	case err == nil:
		src.fromView = true
		log.DebugContext(ctx, "active-set view refreshed from the change feed", "changes", got.Changes, "loaded", got.Loaded)
		return src
	case errors.Is(err, activeset.ErrEmpty):
		src.why = fullReadStart
	case errors.Is(err, activeset.ErrRelist):
		src.why = fullReadRelist
	default:
		src.why = fullReadLost
		attrs := []any{"error", err}
		if errors.Is(err, changefeed.ErrGap) {
			attrs = append(attrs, "gap", true)
		}
		log.WarnContext(ctx, "the active-set view lost its place in the change feed; this tick reads every active operation", attrs...)
	}
	rb, err := e.view.Begin(ctx)
	if err != nil {
		log.WarnContext(ctx, "the active-set view could not start; this tick reads every active operation and the next tries again", "error", err)
		return src
	}
	src.rb = rb
	return src
}

// opPage is a page of active operations: parsed, from the view, or as the
// store's query returned them.
type opPage struct {
	ops   []activeset.Op
	items []store.Item
}

// stream hands the active operations to page a page at a time.
func (s *pollSource) stream(ctx context.Context, q store.ActiveOperationsQuery, page func(opPage) error) error {
	if s.fromView {
		return s.e.view.Operations(ctx, q.PageSize, func(ops []activeset.Op) error { return page(opPage{ops: ops}) })
	}
	return s.e.store.ActiveOperations(ctx, q, func(items []store.Item) error { return page(opPage{items: items}) })
}

// operations is a page's operations parsed, each once: a page of the full
// read is parsed and recorded here, on the page preparers' goroutines.
func (s *pollSource) operations(p opPage) []activeset.Op {
	if p.items == nil {
		return p.ops
	}
	ops := make([]activeset.Op, len(p.items))
	for i, it := range p.items {
		if ops[i].Doc, ops[i].Err = document.ParseOperation(it.Body); ops[i].Err != nil {
			ops[i].Raw = it.Body // for its address in the tick's warning
		}
	}
	if s.rb != nil {
		s.rb.Operations(p.items, ops)
	}
	return ops
}

// resources reads refs' documents, each parsed once, got[i] for refs[i]
// (neither a document nor an error: gone): from the view, their
// projections (read them whole before writing them). unanswered are the
// refs it could not read (err says why): their operations read them one
// by one.
func (s *pollSource) resources(ctx context.Context, refs []store.DocRef) (got []activeset.Res, unanswered map[store.DocRef]bool, err error) {
	var ask []int // indexes of the refs the store is asked for
	if s.fromView {
		var vErr error
		got, ask, vErr = s.e.view.Resources(refs)
		if vErr != nil {
			got, ask = nil, nil
		} else if len(ask) == 0 {
			return got, nil, nil
		}
	}
	if got == nil {
		got = make([]activeset.Res, len(refs))
		ask = make([]int, len(refs))
		for i := range refs {
			ask[i] = i
		}
	}
	askRefs := make([]store.DocRef, len(ask))
	for j, i := range ask {
		askRefs[j] = refs[i]
	}
	read, err := s.e.readMany(ctx, askRefs)
	if err != nil {
		unanswered = make(map[store.DocRef]bool, len(askRefs))
		for _, r := range askRefs {
			unanswered[r] = true
		}
		return got, unanswered, err
	}
	parsed := make(map[store.DocRef]activeset.Res, len(read))
	for r, it := range read {
		var p activeset.Res
		p.Doc, p.Err = document.ParseResource(it.Body)
		parsed[r] = p
	}
	for j, i := range ask {
		got[i] = parsed[askRefs[j]] // none: gone
	}
	switch {
	case s.fromView:
		s.e.view.Learn(askRefs, read, parsed)
	case s.rb != nil:
		s.rb.Resources(askRefs, read, parsed)
	}
	return got, nil, nil
}

// finish makes a completed full read the view; streamErr is the query's.
// Pages are prepared, and so recorded, only while ctx lasts: one that
// ended may have left a page out.
func (s *pollSource) finish(ctx context.Context, streamErr error) {
	if s.rb == nil || streamErr != nil || ctx.Err() != nil {
		return
	}
	st := s.rb.Commit()
	elapsed := s.e.clock().Sub(s.began)
	s.e.log.InfoContext(ctx, MsgViewRebuilt, "reason", s.why, "operations", st.Operations,
		"resources", st.Resources, "view_bytes", st.Bytes, "elapsed_ms", float64(elapsed.Microseconds())/1000,
		"next_relist", s.e.view.NextRelist().UTC().Format(time.RFC3339))
}

// resourceRef is the resource document an operation polls against: its
// target's, in its own partition; false when externalId names another
// subscription (newJob refuses such an operation without reading).
func resourceRef(partitionKey, externalID string) (store.DocRef, bool) {
	if partitionKey == "" || document.PartitionKey(document.SubscriptionOf(externalID)) != partitionKey {
		return store.DocRef{}, false
	}
	return store.DocRef{PartitionKey: partitionKey, ID: document.CosmosID(externalID)}, true
}

// opResourceRef is resourceRef for op, from what its projection recorded
// when it has one.
func opResourceRef(op *document.OperationDocument) (store.DocRef, bool) {
	id := op.TargetDocument()
	if op.PartitionKey == "" || id == "" {
		return store.DocRef{}, false
	}
	return store.DocRef{PartitionKey: op.PartitionKey, ID: id}, true
}

// ActiveSetStats is what the tick's view of the active set holds now.
func (e *Engine) ActiveSetStats() activeset.Stats { return e.view.Stats() }
