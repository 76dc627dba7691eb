package dst

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/core/store"
)

// gatedStore is the run's store as every party reaches it: each call
// parks at the scheduler's gate, a store fault window may answer 429 or
// 503 in its place, and every write that lands is shown to the oracle
// (which checks each terminal write against CS's truth).
type gatedStore struct {
	w    *world
	next store.Store
}

var errThrottled = errors.New("store: 429 request rate is large (a fault of the run)")

func (s *gatedStore) enter(ctx context.Context, what string) error {
	s.w.sched.gate(ctx, "store "+what)
	if err := ctx.Err(); err != nil {
		return err
	}
	if f := s.w.faults.active(faultStore, ""); f != nil {
		s.w.cover.fault(faultStore, nil)
		return errThrottled
	}
	return nil
}

func (s *gatedStore) Get(ctx context.Context, pk, id string) (store.Item, error) {
	if err := s.enter(ctx, "get "+id); err != nil {
		return store.Item{}, err
	}
	return s.next.Get(ctx, pk, id)
}

func (s *gatedStore) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	slices.Sort(ids) // the store answers a set
	what := fmt.Sprintf("readmany %d %s", len(refs), strings.Join(ids, " "))
	if err := s.enter(ctx, what); err != nil {
		return nil, err
	}
	return s.next.ReadMany(ctx, refs)
}

func (s *gatedStore) Create(ctx context.Context, pk string, doc []byte) (store.Item, error) {
	if err := s.enter(ctx, "create "+digest(doc)); err != nil {
		return store.Item{}, err
	}
	it, err := s.next.Create(ctx, pk, doc)
	if err == nil {
		s.w.oracle.wrote(ctx, pk, it.Body)
	}
	return it, err
}

func (s *gatedStore) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (store.Item, error) {
	if err := s.enter(ctx, "replace "+id+" "+digest(doc)); err != nil {
		return store.Item{}, err
	}
	it, err := s.next.Replace(ctx, pk, id, doc, s.unguarded(ctx, pk, id, ifMatch))
	if err == nil {
		s.w.oracle.wrote(ctx, pk, it.Body)
	}
	return it, err
}

func (s *gatedStore) SoftDelete(ctx context.Context, pk, id string) error {
	if err := s.enter(ctx, "softdelete "+id); err != nil {
		return err
	}
	err := s.next.SoftDelete(ctx, pk, id)
	if err == nil {
		s.w.oracle.softDeleted(pk, id)
	}
	return err
}

func (s *gatedStore) Batch(ctx context.Context, pk string, ops []store.BatchOp) ([]store.Item, error) {
	what := "batch"
	for _, op := range ops {
		what += " " + string(op.Kind) + " " + op.ID + " " + digest(op.Body)
	}
	if err := s.enter(ctx, what); err != nil {
		return nil, err
	}
	items, err := s.next.Batch(ctx, pk, s.unguardedBatch(ctx, pk, ops))
	if err == nil {
		for i, op := range ops {
			if op.Kind != store.OpDelete && i < len(items) {
				s.w.oracle.wrote(ctx, pk, items[i].Body)
			}
		}
	}
	return items, err
}

func (s *gatedStore) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	if err := s.enter(ctx, "active"); err != nil {
		return err
	}
	return s.next.ActiveOperations(ctx, q, page)
}

func (s *gatedStore) Children(ctx context.Context, pk, parent string, page func([]store.Item) error) error {
	if err := s.enter(ctx, "children "+parent); err != nil {
		return err
	}
	return s.next.Children(ctx, pk, parent, page)
}

func (s *gatedStore) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	if err := s.enter(ctx, "feed"); err != nil {
		return store.FeedPage{}, err
	}
	return s.next.ChangeFeed(ctx, continuation, maxItems)
}

// Close closes nothing: the run closes the store it made.
func (s *gatedStore) Close() error { return nil }

// digest tells two bodies apart in a gate's key: two calls parked at once
// are ordered by what they carry, not by which arrived first.
func digest(b []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

func (s *gatedStore) Partition(ctx context.Context, pk string, page func([]store.Item) error) error {
	if err := s.enter(ctx, "partition "+pk); err != nil {
		return err
	}
	return s.next.Partition(ctx, pk, page)
}
