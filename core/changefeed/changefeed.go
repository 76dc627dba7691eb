// Package changefeed reads a document store's change feed for a caller
// that owns its position: the local Functions host's dispatch trigger keeps
// it in a lease, a view kept current from the feed keeps it in memory. The
// reader works on any store.Store (embedded, the store API, Cosmos DB).
//
// What the feed carries. Cosmos DB's latest-version change feed, which the
// embedded store copies, delivers every create and replace of a document,
// as the document's latest version when the feed is read: versions written
// between two reads are coalesced into the last one. A soft delete
// (deletionTimestamp set, a short ttl) is a write, so it is delivered.
// Changes come in order within a partition key; across partitions only
// roughly, and after a partition split a range may restart a little behind.
//
// What it does not carry. A hard delete (DeleteItem, a batch's Delete) and
// a TTL expiry remove a document without a change: nothing is delivered,
// ever. A reader that keeps documents must drop them itself: at their
// expiry (_ts + ttl), when a soft delete arrives, and by rebuilding from a
// full read now and then, which is the only way to notice a hard delete.
//
// Delivery is at least once. Read never moves a position: the caller
// commits Page.Next after it has handled the page, and reads the page again
// if it failed, so a change may come twice (and an older version may come
// after a newer one was read directly from the store): handle changes
// idempotently, by etag or instanceVersion.
//
// A position the store cannot resume from (another store's, one of a
// container since recreated, garbage) is ErrGap. The changes since are out
// of reach; the caller must rebuild from a full read and Begin again.
package changefeed

import (
	"context"
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
)

// ErrGap is the error (errors.Is) of a read from a position the store
// refused: relist, then Begin again.
var ErrGap = store.ErrFeedGap

// DefaultPageSize bounds one read when the caller names no size.
const DefaultPageSize = 100

// Feed is the part of store.Store the reader uses.
type Feed interface {
	ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error)
}

// Start says where a reader without a position begins.
type Start struct {
	kind startKind
	at   time.Time
}

type startKind int

const (
	startNow startKind = iota
	startBeginning
	startTime
)

// FromNow delivers what is written after Begin returns: the Functions
// trigger's default on its first start.
func FromNow() Start { return Start{kind: startNow} }

// FromBeginning delivers every document the feed holds, then what follows
// (the trigger's startFromBeginning).
func FromBeginning() Start { return Start{kind: startBeginning} }

// FromTime delivers the documents last written at or after t (the trigger's
// startFromTime), to the store's one-second resolution.
func FromTime(t time.Time) Start { return Start{kind: startTime, at: t} }

func (s Start) String() string {
	switch s.kind {
	case startBeginning:
		return "the beginning"
	case startTime:
		return s.at.UTC().Format(time.RFC3339)
	}
	return "now"
}

// Reader reads one store's change feed.
type Reader struct {
	feed     Feed
	pageSize int
	now      func() time.Time
}

// Option adjusts a Reader.
type Option func(*Reader)

// WithPageSize bounds each read to n changes (maxItemsPerInvocation).
func WithPageSize(n int) Option { return func(r *Reader) { r.pageSize = n } }

// WithClock sets the clock FromNow starts at.
func WithClock(c clock.Clock) Option { return func(r *Reader) { r.now = c.Now } }

// NewReader reads feed.
func NewReader(feed Feed, opts ...Option) *Reader {
	r := &Reader{feed: feed, pageSize: DefaultPageSize, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	if r.pageSize <= 0 {
		r.pageSize = DefaultPageSize
	}
	return r
}

// Begin returns the position start names. FromNow reads to the feed's end
// from the current second (a few changes at most, never the whole feed)
// and skips what it finds: those were written before Begin returned.
func (r *Reader) Begin(ctx context.Context, start Start) (string, error) {
	switch start.kind {
	case startBeginning:
		return "", nil
	case startTime:
		return store.FeedSince(start.at), nil
	}
	pos := store.FeedSince(r.now())
	for {
		page, err := r.feed.ChangeFeed(ctx, pos, r.pageSize)
		if err != nil {
			return "", fmt.Errorf("finding the end of the change feed: %w", err)
		}
		pos = page.Continuation
		if len(page.Items) == 0 {
			return pos, nil
		}
	}
}

// Page is one read of the feed.
type Page struct {
	// Changes are the documents changed after the position read from.
	Changes []store.Item
	// Next is the position after Changes; commit it once they are handled.
	Next string
}

// Read reads up to the page size of changes after pos. An empty page means
// the feed has nothing newer yet; its Next may still differ from pos and
// is the better position to keep.
func (r *Reader) Read(ctx context.Context, pos string) (Page, error) {
	page, err := r.feed.ChangeFeed(ctx, pos, r.pageSize)
	if err != nil {
		return Page{}, fmt.Errorf("reading the change feed: %w", err)
	}
	return Page{Changes: page.Items, Next: page.Continuation}, nil
}

// Drain reads from pos to the end of the feed, handing each non-empty page
// to handle, and returns the position after the last page handled. When
// handle or a read fails (or ctx ends), it returns the position before
// that page with the error, so the page comes again on the next Drain.
func (r *Reader) Drain(ctx context.Context, pos string, handle func([]store.Item) error) (string, error) {
	for {
		if err := ctx.Err(); err != nil {
			return pos, err
		}
		page, err := r.Read(ctx, pos)
		if err != nil {
			return pos, err
		}
		if len(page.Changes) == 0 {
			return page.Next, nil
		}
		if err := handle(page.Changes); err != nil {
			return pos, fmt.Errorf("handling %d changes: %w", len(page.Changes), err)
		}
		pos = page.Next
	}
}
