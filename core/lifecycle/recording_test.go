package lifecycle

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hcpops/hcpops/core/store"
)

// write describes one store write, for hooks and counts.
type write struct {
	kind string // Create, Replace, SoftDelete, Batch
	pk   string
	ids  []string
	body [][]byte
}

func (w write) contains(s string) bool {
	for _, b := range w.body {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// hookPhase says whether a hook runs before or after the write.
type hookPhase int

const (
	beforeWrite hookPhase = iota
	afterWrite
)

// recordingStore counts every write through it and lets a test interpose
// on writes: a hook error before a write stops it; after a write it makes
// the caller see a failure although the write happened (a crash).
type recordingStore struct {
	store.Store
	writes atomic.Int64
	reads  atomic.Int64 // point reads
	// readManys counts ReadMany calls, readManyDocs the documents asked.
	readManys, readManyDocs atomic.Int64
	// queryItems counts what the active-operations query returned,
	// feedItems what the change feed did (view_test.go).
	queryItems, feedItems atomic.Int64
	// feedGap refuses the next change-feed read's continuation.
	feedGap  atomic.Bool
	mu       sync.Mutex
	hook     func(ctx context.Context, phase hookPhase, w write) error
	feedHook func(page store.FeedPage) // after each change-feed read
}

func (s *recordingStore) setHook(h func(ctx context.Context, phase hookPhase, w write) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = h
}

func (s *recordingStore) run(ctx context.Context, phase hookPhase, w write) error {
	s.mu.Lock()
	h := s.hook
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(ctx, phase, w)
}

func (s *recordingStore) do(ctx context.Context, w write, fn func() error) error {
	if err := s.run(ctx, beforeWrite, w); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	s.writes.Add(1)
	return s.run(ctx, afterWrite, w)
}

func (s *recordingStore) Create(ctx context.Context, pk string, doc []byte) (item store.Item, err error) {
	err = s.do(ctx, write{kind: "Create", pk: pk, body: [][]byte{doc}}, func() (err error) {
		item, err = s.Store.Create(ctx, pk, doc)
		return err
	})
	return item, err
}

func (s *recordingStore) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (item store.Item, err error) {
	err = s.do(ctx, write{kind: "Replace", pk: pk, ids: []string{id}, body: [][]byte{doc}}, func() (err error) {
		item, err = s.Store.Replace(ctx, pk, id, doc, ifMatch)
		return err
	})
	return item, err
}

func (s *recordingStore) SoftDelete(ctx context.Context, pk, id string) error {
	return s.do(ctx, write{kind: "SoftDelete", pk: pk, ids: []string{id}}, func() error {
		return s.Store.SoftDelete(ctx, pk, id)
	})
}

func (s *recordingStore) Batch(ctx context.Context, pk string, ops []store.BatchOp) (items []store.Item, err error) {
	w := write{kind: "Batch", pk: pk}
	for _, op := range ops {
		w.ids = append(w.ids, op.ID)
		w.body = append(w.body, op.Body)
	}
	err = s.do(ctx, w, func() (err error) {
		items, err = s.Store.Batch(ctx, pk, ops)
		return err
	})
	return items, err
}

func (s *recordingStore) Get(ctx context.Context, pk, id string) (store.Item, error) {
	s.reads.Add(1)
	return s.Store.Get(ctx, pk, id)
}

func (s *recordingStore) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	s.readManys.Add(1)
	s.readManyDocs.Add(int64(len(refs)))
	return s.Store.ReadMany(ctx, refs)
}

func (s *recordingStore) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	return s.Store.ActiveOperations(ctx, q, func(items []store.Item) error {
		s.queryItems.Add(int64(len(items)))
		return page(items)
	})
}

func (s *recordingStore) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	if s.feedGap.CompareAndSwap(true, false) {
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w: continuation %.20q refused", store.ErrFeedGap, continuation)
	}
	page, err := s.Store.ChangeFeed(ctx, continuation, maxItems)
	if err != nil {
		return page, err
	}
	s.feedItems.Add(int64(len(page.Items)))
	s.mu.Lock()
	h := s.feedHook
	s.mu.Unlock()
	if h != nil {
		h(page)
	}
	return page, nil
}

// setFeedHook runs h after each change-feed read.
func (s *recordingStore) setFeedHook(h func(store.FeedPage)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feedHook = h
}
