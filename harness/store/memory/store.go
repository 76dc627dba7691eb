// Package memory is the document store in memory: what unit tests run on,
// so they need no files and no real time. It honours the same contract as
// the embedded and Cosmos DB stores (ETags, atomic batches, TTL, soft
// delete, ordered change feed), proven by the shared suite in
// harness/store/storetest, and parses, classifies, stamps and writes
// documents with the embedded store's own code (harness/store/storedoc).
//
// Time is the injected clock's: a document expires when the clock says
// so, with no sweeper goroutine (expired documents are dropped by the
// next write).
package memory

import (
	"container/heap"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// ErrClosed is what every call of a closed store returns.
var ErrClosed = errors.New("memory store is closed")

// Store is a store.Store in memory. It is safe for concurrent use; a page
// callback runs without the store's lock held. Create, Replace, SoftDelete
// and Batch are storedoc.WriteFunc's methods, each run under the write
// lock by write.
type Store struct {
	writes
	clock clock.Clock
	// tag marks this store's feed continuations, so another store's
	// positions are refused (ErrFeedGap) instead of read as its own.
	tag string

	mu     sync.RWMutex
	closed bool
	seq    uint64
	docs   map[key]*record
	ops    map[key]struct{} // documents of a class other than ClassNone
	feed   []feedEntry      // ascending seq; an entry is stale once its document moved on
	expiry expiryHeap
}

var _ store.Store = (*Store)(nil)

type writes = storedoc.WriteFunc[key, *record]

// key names a document. Streams go in key order (partition, then id), as
// the embedded store's do.
type key struct{ pk, id string }

// record is one stored version with what the store indexes.
type record struct {
	key        key
	seq        uint64 // feed position of this version
	created    uint64
	ts         int64 // _ts
	expires    int64 // unix seconds; 0 means never
	deleted    bool
	class      document.Class
	resourceID []byte
	etag       string
	body       []byte
}

// A record is a storedoc.Version.

func (r *record) Expired(now int64) bool { return r.expires != 0 && now >= r.expires }

func (r *record) Visible(now int64) bool { return !r.Expired(now) && !r.deleted }

func (r *record) HasETag(etag string) bool { return r.etag == etag }

func (r *record) ETag() string { return r.etag }

func (r *record) Body() []byte { return r.body }

// item copies the record out: a caller may change what it is given.
func (r *record) item() store.Item {
	return store.Item{Body: append([]byte(nil), r.body...), ETag: r.etag}
}

type feedEntry struct {
	seq uint64
	key key
}

// Option configures New.
type Option func(*Store)

// WithClock sets the clock for _ts, TTL and deletionTimestamp (default the
// wall clock); tests pass a manual one.
func WithClock(c clock.Clock) Option {
	return func(s *Store) { s.clock = clock.OrReal(c) }
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{clock: clock.Real{}, tag: newTag(), docs: map[key]*record{}, ops: map[key]struct{}{}}
	for _, opt := range opts {
		opt(s)
	}
	s.writes = s.write
	return s
}

func newTag() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return fmt.Sprintf("mem%x", b)
}

// Close drops every document; later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.docs, s.ops, s.feed, s.expiry = nil, nil, nil, nil
	return nil
}

// Get is a point read; soft-deleted and expired documents are ErrNotFound.
func (s *Store) Get(ctx context.Context, partitionKey, id string) (store.Item, error) {
	if err := storedoc.CheckRequest(ctx, partitionKey, id); err != nil {
		return store.Item{}, fmt.Errorf("reading document %s: %w", id, err)
	}
	now := s.clock.Now().Unix()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.Item{}, fmt.Errorf("reading document %s: %w", id, ErrClosed)
	}
	rec, ok := s.docs[key{partitionKey, id}]
	if !ok || !rec.Visible(now) {
		return store.Item{}, fmt.Errorf("reading document %s in partition %s: %w", id, store.KeyLabel(partitionKey), store.ErrNotFound)
	}
	return rec.item(), nil
}

// ReadMany reads the documents under one lock.
func (s *Store) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	if err := storedoc.CheckReadMany(ctx, refs); err != nil {
		return nil, err
	}
	now := s.clock.Now().Unix()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("reading %d documents: %w", len(refs), ErrClosed)
	}
	out := make(map[store.DocRef]store.Item, len(refs))
	for _, ref := range refs {
		if rec, ok := s.docs[key{ref.PartitionKey, ref.ID}]; ok && rec.Visible(now) {
			out[ref] = rec.item()
		}
	}
	return out, nil
}

// expiryEntry is one version's expiry; stale once the document moved on.
type expiryEntry struct {
	at  int64
	seq uint64
	key key
}

// expiryHeap orders what will expire, soonest first, so a write drops
// what has expired without scanning every document.
type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// sweep drops the documents expired by now; the caller holds the write lock.
func (s *Store) sweep(now int64) {
	for len(s.expiry) > 0 && s.expiry[0].at <= now {
		e := heap.Pop(&s.expiry).(expiryEntry)
		if rec, ok := s.docs[e.key]; ok && rec.seq == e.seq {
			s.drop(rec)
		}
	}
}

// drop removes a document; its feed entry goes stale.
func (s *Store) drop(rec *record) {
	delete(s.docs, rec.key)
	delete(s.ops, rec.key)
}

// compactFeed rewrites the feed once most of its entries are stale, so a
// long-lived store's feed stays the size of its documents.
func (s *Store) compactFeed() {
	if len(s.feed) < 64 || len(s.feed) < 2*len(s.docs) {
		return
	}
	kept := s.feed[:0]
	for _, e := range s.feed {
		if rec, ok := s.docs[e.key]; ok && rec.seq == e.seq {
			kept = append(kept, e)
		}
	}
	clear(s.feed[len(kept):])
	s.feed = kept
}

// now is the clock's time, read once per call as the other stores do.
func (s *Store) now() time.Time { return s.clock.Now() }
