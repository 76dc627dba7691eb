// Package activeset is the poll's view of the active set: the operation
// documents the active-operations query selects and the resource documents
// their polls need, held in the memory of the instance that runs the
// timer and kept current from the container's change feed, as ARO-HCP's
// informers are. A tick then reads from the store what changed since the
// last one, not everything in flight.
//
// The view is rebuilt from a full read when it starts, when its place in
// the feed is lost (a continuation the store refuses, a failed read), and
// on a relist interval. What the feed never carries is handled here: a
// soft delete is a write and arrives; a TTL expiry is computed from _ts and
// ttl, as Cosmos DB hides an expired document at once; a hard delete (which
// ARO-HCP never makes: its deletes are soft) is noticed by the next
// relist.
//
// The view is a cache of reads, never of writes: every write hcpops makes
// stays ETag-guarded against the live document, so a stale copy costs a
// 412 and a re-read, never a lost update. Its position in the feed is in
// memory and its own, independent of the dispatch trigger's leases.
package activeset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Why a view cannot serve a tick until it is rebuilt (errors.Is).
var (
	ErrEmpty  = errors.New("the active-set view has not been built")
	ErrRelist = errors.New("the active-set view's relist interval has passed")
	// ErrLost wraps the feed's error: a gap (changefeed.ErrGap), or a read
	// that failed, after which what changed meanwhile is unknown.
	ErrLost = errors.New("the active-set view lost its place in the change feed")
)

// defaultPage is Operations' page size when the caller names none.
const defaultPage = 100

// DefaultRelist is ARO-HCP's relist interval for its active-operations
// and resource informers.
const DefaultRelist = 30 * time.Minute

// Store is the part of the document store the view reads.
type Store interface {
	changefeed.Feed
	ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error)
}

// Config builds a View. Store, ResourceOf and Clock are required.
type Config struct {
	Store Store
	// ResourceOf is the resource document a non-terminal operation polls
	// against, from its partition and externalId; false for none.
	ResourceOf func(partitionKey, externalID string) (store.DocRef, bool)
	Clock      clock.Clock
	// Relist is how long a build serves before the next full read;
	// 0 means DefaultRelist.
	Relist time.Duration
	// Jitter is added to each relist interval; nil is ARO-HCP's: up to 30%
	// more, drawn anew each time, so instances started together do not
	// relist together.
	Jitter func(time.Duration) time.Duration
	// FeedPage bounds one change-feed read; 0 is the reader's default.
	FeedPage int
	Logger   *slog.Logger
	// AfterFunc runs f after d, as time.AfterFunc, and returns what stops
	// it; nil is time.AfterFunc. A built view frees itself at its relist
	// time, so an instance the timer has left does not hold it for ever.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// View is the active set as of its last Refresh or Commit. Safe for
// concurrent use.
type View struct {
	cfg  Config
	feed *changefeed.Reader

	mu         sync.Mutex
	set        *set // nil until built
	pos        string
	nextRelist time.Time
	stopFree   func() bool // the pending free of set, if any
}

// New returns an empty view; the first tick builds it.
func New(cfg Config) (*View, error) {
	if cfg.Store == nil || cfg.ResourceOf == nil || cfg.Clock == nil {
		return nil, fmt.Errorf("activeset: Store, ResourceOf and Clock are required")
	}
	if cfg.Relist <= 0 {
		cfg.Relist = DefaultRelist
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func(d time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(d)*3/10 + 1)) }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.AfterFunc == nil {
		cfg.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	opts := []changefeed.Option{changefeed.WithClock(cfg.Clock)}
	if cfg.FeedPage > 0 {
		opts = append(opts, changefeed.WithPageSize(cfg.FeedPage))
	}
	return &View{cfg: cfg, feed: changefeed.NewReader(cfg.Store, opts...)}, nil
}

// Stats describe what a view holds.
type Stats struct {
	Operations int   // operation documents
	Resources  int   // resource documents needed by them (held, gone or not yet read)
	Bytes      int64 // of their records: compressed projections and headers
	// Held is the memory the records take, freed ones not yet compacted
	// away included.
	Held int64
}

// Stats is what the view holds now; zero when it is not built.
func (v *View) Stats() Stats {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set == nil {
		return Stats{}
	}
	return v.set.stats()
}

// Refreshed is what one Refresh read.
type Refreshed struct {
	// Changes are the documents the change feed delivered.
	Changes int
	// Loaded are the resources read because an operation came to need
	// them without the feed having brought them.
	Loaded int
}

// Refresh brings the view up to date from the change feed. An error
// wrapping ErrEmpty, ErrRelist or ErrLost means it cannot serve until it
// is rebuilt (Begin); it holds nothing then. A resource that could not be
// read stays unknown (Resources says so) and is read again next time.
func (v *View) Refresh(ctx context.Context) (Refreshed, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var r Refreshed
	switch due := !v.cfg.Clock.Now().Before(v.nextRelist); {
	case v.set == nil && due && !v.nextRelist.IsZero():
		return r, ErrRelist // freed at its relist time
	case v.set == nil:
		return r, ErrEmpty
	case due:
		v.drop()
		return r, ErrRelist
	}
	stash := map[store.DocRef]stashed{}
	pos, err := v.feed.Drain(ctx, v.pos, func(items []store.Item) error {
		r.Changes += len(items)
		v.apply(ctx, items, stash)
		return nil
	})
	if err != nil {
		v.drop()
		return r, fmt.Errorf("%w: %w", ErrLost, err)
	}
	v.pos = pos
	r.Loaded = v.load(ctx, stash)
	v.set.compact()
	return r, nil
}

// stashed is a resource document the feed brought before any operation
// needed it.
type stashed struct {
	h    head
	body []byte
}

// maxStash bounds the resources a drain keeps for operations that may
// come later in it; past it, such a resource is read when needed.
const maxStash = 10000

// apply records changed documents: an operation as the query would select
// it (or not), a resource only if some operation needs it; a cluster, node
// pool or external auth nobody needs yet is kept in stash, since its
// operation may come later in the same drain.
func (v *View) apply(ctx context.Context, items []store.Item, stash map[store.DocRef]stashed) {
	s, now := v.set, v.cfg.Clock.Now().Unix()
	for _, it := range items {
		h, err := s.heads.read(it.Body)
		if err != nil {
			v.cfg.Logger.DebugContext(ctx, "active-set view skipped an unreadable change", "error", err)
			continue
		}
		if h.operation {
			v.applyOperation(s, h, it.Body, now)
			continue
		}
		ref := store.DocRef{PartitionKey: h.partitionKey, ID: h.id}
		e, held := s.resource(ref)
		if !held {
			if old, ok := stash[ref]; ok && old.h.replacedBy(h) || !ok && h.resource && len(stash) < maxStash {
				stash[ref] = stashed{h: h, body: it.Body}
			}
			continue
		}
		if rec := s.rec(e.at); rec != nil && olderOrSame(rec, h) {
			continue
		}
		rec := resourceRecord(s, h, it.Body, nil, now)
		s.setResource(ref, stateOf(rec), rec)
	}
}

func (v *View) applyOperation(s *set, h head, body []byte, now int64) {
	p := s.partition(h.partitionKey, false)
	k, known := s.others.lookup(h.id)
	if p != nil && known {
		if old, held := p.ops.get(k); held && olderOrSame(s.rec(old.at), h) {
			return
		}
	}
	c := h.class()
	if c == classNone || (h.expiry() != 0 && h.expiry() <= now) {
		if p != nil && known {
			s.removeOperation(h.partitionKey, p, k)
		}
		return
	}
	ref, needs := resourceFor(v.cfg.ResourceOf, h, c)
	s.putOperation(h, operationRecord(s, h, body, nil, opFlags(c)), ref, needs)
}

// operationRecord is the record of an operation: its projection, or the
// document as read when it does not parse (each tick then reports why).
// op, when set, is body parsed.
func operationRecord(s *set, h head, body []byte, op *document.OperationDocument, flags byte) []byte {
	if op == nil {
		var err error
		if op, err = document.ParseOperation(body); err != nil {
			return s.ops.encode(body, h, flags|flagRaw)
		}
	}
	return s.ops.project(op.AppendProjection, h, flags)
}

func opFlags(c class) byte {
	if c == classPending {
		return flagPending
	}
	return 0
}

// olderOrSame says whether h is no newer than the record held.
func olderOrSame(rec []byte, h head) bool {
	m, _, err := header(rec)
	return err == nil && !m.newer(h)
}

// resourceRecord is the record of a resource document: its projection
// when it is live (the document as read when it does not parse), a
// header-only record when it is soft-deleted or expired. res, when set,
// is body parsed.
func resourceRecord(s *set, h head, body []byte, res *document.Resource, now int64) []byte {
	if h.deleted || (h.expiry() != 0 && h.expiry() <= now) {
		return s.res.encode(nil, h, flagGone)
	}
	if res == nil {
		var err error
		if res, err = document.ParseResource(body); err != nil {
			return s.res.encode(body, h, flagRaw)
		}
	}
	return s.res.project(res.AppendProjection, h, 0)
}

func stateOf(rec []byte) resState {
	if len(rec) > 0 && rec[0]&flagGone != 0 {
		return resAbsent
	}
	return resPresent
}

// load answers the resources operations came to need: from what the
// drain brought, else with ReadMany. It returns how many it asked the
// store for.
func (v *View) load(ctx context.Context, stash map[store.DocRef]stashed) int {
	s, now := v.set, v.cfg.Clock.Now().Unix()
	var refs []store.DocRef
	for ref := range s.pending {
		e, ok := s.resource(ref)
		st, brought := stash[ref]
		switch {
		case !ok || e.state != resUnknown:
			delete(s.pending, ref) // no longer needed, or answered
		case brought:
			rec := resourceRecord(s, st.h, st.body, nil, now)
			s.setResource(ref, stateOf(rec), rec)
		default:
			refs = append(refs, ref)
		}
	}
	// In the documents' order, not the map's: a replayed run reads the
	// same batches.
	slices.SortFunc(refs, compareRefs)
	asked := 0
	for start := 0; start < len(refs); start += store.MaxReadMany {
		chunk := refs[start:min(start+store.MaxReadMany, len(refs))]
		got, err := v.cfg.Store.ReadMany(ctx, chunk)
		asked += len(chunk)
		if err != nil {
			v.cfg.Logger.WarnContext(ctx, "active-set view could not read the resources new operations need; their polls read them",
				"documents", len(refs)-start, "error", err)
			break
		}
		v.record(s, chunk, got, nil)
	}
	return asked
}

// record sets what a read said of refs: held when found, gone when not.
// parsed, when it has a ref, is its document parsed.
func (v *View) record(s *set, refs []store.DocRef, got map[store.DocRef]store.Item, parsed map[store.DocRef]Res) {
	now := v.cfg.Clock.Now().Unix()
	for _, ref := range refs {
		it, ok := got[ref]
		if !ok {
			s.setResource(ref, resAbsent, nil)
			continue
		}
		h, err := s.heads.read(it.Body)
		if err != nil {
			continue // left unknown: its poll reads it and says what is wrong
		}
		if e, held := s.resource(ref); held && s.rec(e.at) != nil && olderOrSame(s.rec(e.at), h) {
			delete(s.pending, ref)
			continue
		}
		rec := resourceRecord(s, h, it.Body, parsed[ref].Doc, now)
		s.setResource(ref, stateOf(rec), rec)
	}
}

// Learn records what the caller read of resources Resources did not know;
// parsed (which may be nil) holds what of it the caller parsed.
func (v *View) Learn(refs []store.DocRef, got map[store.DocRef]store.Item, parsed map[store.DocRef]Res) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set != nil {
		v.record(v.set, refs, got, parsed)
	}
}

func (v *View) snapshot() ([][]byte, *codec, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.set
	if s == nil {
		return nil, nil, ErrEmpty
	}
	now := v.cfg.Clock.Now().Unix()
	recs := make([][]byte, 0, s.nOps)
	var expired []key
	for pk, p := range s.parts {
		expired = expired[:0]
		for _, e := range p.ops.entries {
			rec := s.rec(e.at)
			if m, _, err := header(rec); err == nil && m.expiredAt(now) {
				expired = append(expired, e.k)
				continue
			}
			recs = append(recs, rec)
		}
		for _, k := range expired {
			s.removeOperation(pk, p, k)
		}
	}
	return recs, s.ops, nil
}

func compareRefs(a, b store.DocRef) int {
	if c := strings.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
