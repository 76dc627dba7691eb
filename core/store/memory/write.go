package memory

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/storedoc"
)

// Create writes a new document, its id taken from the body.
func (s *Store) Create(ctx context.Context, partitionKey string, doc []byte) (store.Item, error) {
	if err := store.CheckDocumentSize(doc); err != nil {
		return store.Item{}, fmt.Errorf("creating document in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	var item store.Item
	err := s.write(ctx, partitionKey, func(t *txn) (err error) {
		item, _, err = t.create(partitionKey, doc)
		return err
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("creating document in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return item, nil
}

// Replace overwrites a live document whose etag still equals ifMatch.
func (s *Store) Replace(ctx context.Context, partitionKey, id string, doc []byte, ifMatch string) (store.Item, error) {
	if err := store.CheckDocumentSize(doc); err != nil {
		return store.Item{}, fmt.Errorf("replacing document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	var item store.Item
	err := s.write(ctx, partitionKey, func(t *txn) (err error) {
		item, err = t.replace(partitionKey, id, doc, ifMatch)
		return err
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("replacing document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return item, nil
}

// SoftDelete marks a document deleted as ARO-HCP does, reading and writing
// under one lock.
func (s *Store) SoftDelete(ctx context.Context, partitionKey, id string) error {
	err := s.write(ctx, partitionKey, func(t *txn) error {
		return t.softDelete(partitionKey, id)
	})
	if err != nil {
		return fmt.Errorf("soft-deleting document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return nil
}

// Batch runs ops on a staged copy of what they touch and applies it only
// when every step succeeded.
func (s *Store) Batch(ctx context.Context, partitionKey string, ops []store.BatchOp) ([]store.Item, error) {
	if err := store.CheckBatch(ops); err != nil {
		return nil, fmt.Errorf("batch in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	items := make([]store.Item, len(ops))
	err := s.write(ctx, partitionKey, func(t *txn) error {
		for i, op := range ops {
			var err error
			id := op.ID
			switch op.Kind {
			case store.OpCreate:
				items[i], id, err = t.create(partitionKey, op.Body)
			case store.OpReplace:
				items[i], err = t.replace(partitionKey, op.ID, op.Body, op.IfMatch)
			case store.OpDelete:
				err = t.remove(partitionKey, op.ID, op.IfMatch)
			default:
				err = fmt.Errorf("%w: unknown batch op kind %q", store.ErrInvalid, op.Kind)
			}
			if err != nil {
				return &store.BatchError{Index: i, Op: op.Kind, ID: id, Err: err}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("batch in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return items, nil
}

// write runs fn on a transaction under the write lock and commits what it
// staged if it returns nil.
func (s *Store) write(ctx context.Context, partitionKey string, fn func(t *txn) error) error {
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

// lookup is the document under k as the transaction sees it, expired or not.
func (t *txn) lookup(k key) (*record, bool) {
	if rec, ok := t.staged[k]; ok {
		return rec, rec != nil
	}
	rec, ok := t.s.docs[k]
	return rec, ok
}

// live is the document under k if a caller may read or write it.
func (t *txn) live(k key) (*record, error) {
	rec, ok := t.lookup(k)
	if !ok || !rec.visible(t.now.Unix()) {
		return nil, fmt.Errorf("document %s: %w", k.id, store.ErrNotFound)
	}
	return rec, nil
}

// create conflicts with any unexpired document, soft-deleted ones included:
// like Cosmos DB, a soft-deleted id stays taken until its ttl runs out.
func (t *txn) create(partitionKey string, body []byte) (store.Item, string, error) {
	obj, meta, err := storedoc.Parse(body, partitionKey)
	if err != nil {
		return store.Item{}, store.TopLevelID(body), err
	}
	k := key{partitionKey, meta.ID}
	if prev, ok := t.lookup(k); ok && !prev.expired(t.now.Unix()) {
		return store.Item{}, meta.ID, fmt.Errorf("document %s: %w", meta.ID, store.ErrConflict)
	}
	return t.put(k, nil, obj, meta), meta.ID, nil
}

func (t *txn) replace(partitionKey, id string, body []byte, ifMatch string) (store.Item, error) {
	if err := storedoc.CheckID(id); err != nil {
		return store.Item{}, err
	}
	if ifMatch == "" {
		return store.Item{}, fmt.Errorf("%w: replace of document %s has no If-Match etag", store.ErrInvalid, id)
	}
	obj, meta, err := storedoc.Parse(body, partitionKey)
	if err != nil {
		return store.Item{}, err
	}
	if meta.ID != id {
		return store.Item{}, fmt.Errorf("%w: body field id is %q, want %q", store.ErrInvalid, meta.ID, id)
	}
	k := key{partitionKey, id}
	prev, err := t.live(k)
	if err != nil {
		return store.Item{}, err
	}
	if prev.etag != ifMatch {
		return store.Item{}, fmt.Errorf("document %s: If-Match %s, current %s: %w", id, ifMatch, prev.etag, store.ErrPreconditionFailed)
	}
	return t.put(k, prev, obj, meta), nil
}

func (t *txn) softDelete(partitionKey, id string) error {
	if err := storedoc.CheckID(id); err != nil {
		return err
	}
	k := key{partitionKey, id}
	prev, err := t.live(k)
	if err != nil {
		return err
	}
	obj, meta, err := storedoc.SoftDelete(prev.body, partitionKey, t.now)
	if err != nil {
		return fmt.Errorf("document %s: %w", id, err)
	}
	t.put(k, prev, obj, meta)
	return nil
}

// remove is a batch Delete: a hard delete, which the change feed never shows.
func (t *txn) remove(partitionKey, id, ifMatch string) error {
	if err := storedoc.CheckID(id); err != nil {
		return err
	}
	if ifMatch == "" {
		return fmt.Errorf("%w: delete of document %s has no If-Match etag", store.ErrInvalid, id)
	}
	k := key{partitionKey, id}
	prev, err := t.live(k)
	if err != nil {
		return err
	}
	if prev.etag != ifMatch {
		return fmt.Errorf("document %s: If-Match %s, current %s: %w", id, ifMatch, prev.etag, store.ErrPreconditionFailed)
	}
	t.staged[k] = nil
	return nil
}

// put stages a new version of the document under k; prev is the version
// it replaces, if any.
func (t *txn) put(k key, prev *record, obj storedoc.Object, meta storedoc.Meta) store.Item {
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
		if rec.class != storedoc.ClassNone {
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
