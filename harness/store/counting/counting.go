// Package counting wraps a store to count what each call costs: point
// reads, read-manys, query and change-feed pages, documents handed out,
// writes. The benchmark reports it per operation; tests use it to say a
// path wrote nothing, or read in batches.
package counting

import (
	"context"
	"sync/atomic"

	"github.com/hcpops/hcpops/core/store"
)

// Store wraps a real store and forwards every call unchanged, counting it.
type Store struct {
	store.Store
	gets, creates, replaces, softDeletes, batches, batchOps  atomic.Int64
	queryPages, queryItems, childPages, feedReads, feedItems atomic.Int64
	readManys, readManyDocs                                  atomic.Int64
}

// Counts is what a Store saw.
type Counts struct {
	Gets        int64 `json:"gets"`
	Creates     int64 `json:"creates"`
	Replaces    int64 `json:"replaces"`
	SoftDeletes int64 `json:"soft_deletes"`
	Batches     int64 `json:"batches"`
	BatchOps    int64 `json:"batch_ops"`
	QueryPages  int64 `json:"query_pages"`
	QueryItems  int64 `json:"query_items"`
	ChildPages  int64 `json:"children_pages"`
	FeedReads   int64 `json:"feed_reads"`
	FeedItems   int64 `json:"feed_items"`
	// ReadManys are batched point reads; ReadManyDocs the documents they
	// asked for.
	ReadManys    int64 `json:"read_manys"`
	ReadManyDocs int64 `json:"read_many_docs"`
}

// Reads are point reads: query pages are reported on their own, since a
// page serves many operations.
func (c Counts) Reads() int64 { return c.Gets }

// DocsRead counts the documents the store handed out, which is what
// Cosmos DB bills a read by (about 1 RU a 1 KB document): query items,
// point reads, documents asked of ReadMany and change-feed items.
func (c Counts) DocsRead() int64 { return c.QueryItems + c.Gets + c.ReadManyDocs + c.FeedItems }

// Minus is what was counted since base.
func (c Counts) Minus(base Counts) Counts {
	return Counts{
		Gets: c.Gets - base.Gets, Creates: c.Creates - base.Creates, Replaces: c.Replaces - base.Replaces,
		SoftDeletes: c.SoftDeletes - base.SoftDeletes, Batches: c.Batches - base.Batches, BatchOps: c.BatchOps - base.BatchOps,
		QueryPages: c.QueryPages - base.QueryPages, QueryItems: c.QueryItems - base.QueryItems,
		ChildPages: c.ChildPages - base.ChildPages, FeedReads: c.FeedReads - base.FeedReads, FeedItems: c.FeedItems - base.FeedItems,
		ReadManys: c.ReadManys - base.ReadManys, ReadManyDocs: c.ReadManyDocs - base.ReadManyDocs,
	}
}

// Writes counts write requests; a transactional batch is one write.
func (c Counts) Writes() int64 { return c.Creates + c.Replaces + c.SoftDeletes + c.Batches }

// RoundTrips counts the calls that each cost the store one request on
// Cosmos DB: point reads, read-manys (one query per physical partition,
// and the test server has one), query and change-feed pages, writes.
func (c Counts) RoundTrips() int64 {
	return c.Gets + c.ReadManys + c.QueryPages + c.ChildPages + c.FeedReads + c.Writes()
}

// New counts the calls made through it to s.
func New(s store.Store) *Store { return &Store{Store: s} }

// Counts is what was counted so far.
func (s *Store) Counts() Counts {
	return Counts{
		Gets: s.gets.Load(), Creates: s.creates.Load(), Replaces: s.replaces.Load(),
		SoftDeletes: s.softDeletes.Load(), Batches: s.batches.Load(), BatchOps: s.batchOps.Load(),
		QueryPages: s.queryPages.Load(), QueryItems: s.queryItems.Load(),
		ChildPages: s.childPages.Load(), FeedReads: s.feedReads.Load(), FeedItems: s.feedItems.Load(),
		ReadManys: s.readManys.Load(), ReadManyDocs: s.readManyDocs.Load(),
	}
}

func (s *Store) Get(ctx context.Context, pk, id string) (store.Item, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, pk, id)
}

func (s *Store) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	s.readManys.Add(1)
	s.readManyDocs.Add(int64(len(refs)))
	return s.Store.ReadMany(ctx, refs)
}

func (s *Store) Create(ctx context.Context, pk string, doc []byte) (store.Item, error) {
	s.creates.Add(1)
	return s.Store.Create(ctx, pk, doc)
}

func (s *Store) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (store.Item, error) {
	s.replaces.Add(1)
	return s.Store.Replace(ctx, pk, id, doc, ifMatch)
}

func (s *Store) SoftDelete(ctx context.Context, pk, id string) error {
	s.softDeletes.Add(1)
	return s.Store.SoftDelete(ctx, pk, id)
}

func (s *Store) Batch(ctx context.Context, pk string, ops []store.BatchOp) ([]store.Item, error) {
	s.batches.Add(1)
	s.batchOps.Add(int64(len(ops)))
	return s.Store.Batch(ctx, pk, ops)
}

func (s *Store) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	return s.Store.ActiveOperations(ctx, q, func(items []store.Item) error {
		s.queryPages.Add(1)
		s.queryItems.Add(int64(len(items)))
		return page(items)
	})
}

func (s *Store) Children(ctx context.Context, pk, parent string, page func([]store.Item) error) error {
	return s.Store.Children(ctx, pk, parent, func(items []store.Item) error {
		s.childPages.Add(1)
		return page(items)
	})
}

func (s *Store) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	s.feedReads.Add(1)
	p, err := s.Store.ChangeFeed(ctx, continuation, maxItems)
	s.feedItems.Add(int64(len(p.Items)))
	return p, err
}
