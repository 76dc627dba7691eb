package memory

import (
	"cmp"
	"container/heap"
	"context"
	"slices"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// write is the store's storedoc.WriteFunc: fn runs once, on a txn under
// the write lock, and what it staged is applied only if it returns nil.
func (s *Store) write(ctx context.Context, partitionKey string, fn func(storedoc.Txn[key, *record]) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storedoc.CheckPartitionKey(partitionKey); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.sweep(now.Unix())
	t := &txn{s: s, now: now, seq: s.seq, staged: map[key]*record{}}
	if err := fn(t); err != nil {
		return err
	}
	t.commit()
	return nil
}

// txn is one write's changes, staged over the store's documents: a nil
// record is a hard delete.
type txn struct {
	s      *Store
	now    time.Time
	seq    uint64
	staged map[key]*record
}

// The storedoc.Txn primitives: the write rules themselves are storedoc's.

func (t *txn) Now() time.Time { return t.now }

func (t *txn) Key(partitionKey, id string) key { return key{partitionKey, id} }

// Lookup is the document under k as the transaction sees it, expired or not.
func (t *txn) Lookup(k key) (*record, bool, error) {
	if rec, ok := t.staged[k]; ok {
		return rec, rec != nil, nil
	}
	rec, ok := t.s.docs[k]
	return rec, ok, nil
}

func (t *txn) Insert(k key, obj document.Object, meta storedoc.Meta) (store.Item, error) {
	return t.put(k, nil, obj, meta), nil
}

func (t *txn) Update(k key, prev *record, obj document.Object, meta storedoc.Meta) (store.Item, error) {
	return t.put(k, prev, obj, meta), nil
}

// Drop stages a hard delete, which commit applies.
func (t *txn) Drop(k key, _ *record) error {
	t.staged[k] = nil
	return nil
}

// put stages a new version of the document under k; prev is the version
// it replaces, if any.
func (t *txn) put(k key, prev *record, obj document.Object, meta storedoc.Meta) store.Item {
	t.seq++
	rec := &record{key: k, seq: t.seq, created: t.seq, ts: t.now.Unix(), deleted: meta.Deleted, class: meta.Class,
		resourceID: []byte(meta.ResourceID)}
	if prev != nil {
		rec.created = prev.created
	}
	if meta.TTL > 0 {
		rec.expires = rec.ts + meta.TTL
	}
	rec.body, rec.etag = storedoc.Stamp(obj, storedoc.System{Seq: rec.seq, Created: rec.created, Now: t.now})
	t.staged[k] = rec
	return rec.item()
}

// commit applies the staged changes; the caller holds the write lock.
func (t *txn) commit() {
	s := t.s
	written := make([]*record, 0, len(t.staged))
	for k, rec := range t.staged {
		if rec == nil {
			if prev, ok := s.docs[k]; ok {
				s.drop(prev)
			}
			continue
		}
		written = append(written, rec)
	}
	slices.SortFunc(written, func(a, b *record) int { return cmp.Compare(a.seq, b.seq) })
	for _, rec := range written {
		s.docs[rec.key] = rec
		if rec.class != document.ClassNone {
			s.ops[rec.key] = struct{}{}
		} else {
			delete(s.ops, rec.key)
		}
		s.feed = append(s.feed, feedEntry{seq: rec.seq, key: rec.key})
		if rec.expires != 0 {
			heap.Push(&s.expiry, expiryEntry{at: rec.expires, seq: rec.seq, key: rec.key})
		}
	}
	s.seq = t.seq
	s.compactFeed()
}
