package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/storedoc"
)

// Create writes a new document, its id taken from the body.
func (s *Store) Create(ctx context.Context, partitionKey string, doc []byte) (store.Item, error) {
	if err := store.CheckDocumentSize(doc); err != nil {
		return store.Item{}, fmt.Errorf("creating document in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	var item store.Item
	err := s.write(ctx, partitionKey, func(w *writer) (err error) {
		item, _, err = w.create(partitionKey, doc) // every run sets item anew
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
	err := s.write(ctx, partitionKey, func(w *writer) (err error) {
		item, err = w.replace(partitionKey, id, doc, ifMatch) // every run sets item anew
		return err
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("replacing document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return item, nil
}

// SoftDelete marks a document deleted as ARO-HCP does. Reading and writing
// happen in one transaction, which is the If-Match write without the retry.
func (s *Store) SoftDelete(ctx context.Context, partitionKey, id string) error {
	err := s.write(ctx, partitionKey, func(w *writer) error {
		return w.softDelete(partitionKey, id)
	})
	if err != nil {
		return fmt.Errorf("soft-deleting document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return nil
}

// Batch runs ops in one bbolt transaction: any failing step rolls back all.
func (s *Store) Batch(ctx context.Context, partitionKey string, ops []store.BatchOp) ([]store.Item, error) {
	if err := store.CheckBatch(ops); err != nil {
		return nil, fmt.Errorf("batch in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	items := make([]store.Item, len(ops))
	err := s.write(ctx, partitionKey, func(w *writer) error {
		clear(items) // a rolled-back run may have filled some
		for i, op := range ops {
			var err error
			id := op.ID
			switch op.Kind {
			case store.OpCreate:
				items[i], id, err = w.create(partitionKey, op.Body)
			case store.OpReplace:
				items[i], err = w.replace(partitionKey, op.ID, op.Body, op.IfMatch)
			case store.OpDelete:
				err = w.remove(partitionKey, op.ID, op.IfMatch)
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

// write runs fn in a write transaction that concurrent writes may share
// (see committer): fn may run more than once, so it must set what it
// captures afresh on every run.
func (s *Store) write(ctx context.Context, partitionKey string, fn func(w *writer) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storedoc.CheckPartitionKey(partitionKey); err != nil {
		return err
	}
	if err := s.damaged(); err != nil {
		return err
	}
	now := s.now()
	err := s.commits.update(func(tx *bolt.Tx) error {
		return fn(newWriter(tx, now))
	})
	if errors.Is(err, ErrDamaged) {
		s.markDamaged(err)
	}
	return err
}

// writer makes the changes of one write transaction, keeping the indexes in
// step with the documents.
type writer struct {
	docs, ops, feed, expiry *bolt.Bucket
	now                     time.Time
}

func newWriter(tx *bolt.Tx, now time.Time) *writer {
	return &writer{
		docs:   tx.Bucket(bucketDocs),
		ops:    tx.Bucket(bucketOps),
		feed:   tx.Bucket(bucketFeed),
		expiry: tx.Bucket(bucketExpiry),
		now:    now,
	}
}

// lookup returns the stored record under key, expired or not.
func (w *writer) lookup(key []byte) (record, bool, error) {
	v := w.docs.Get(key)
	if v == nil {
		return record{}, false, nil
	}
	rec, err := decodeRecord(v)
	if err != nil {
		return record{}, false, fmt.Errorf("document %q: %w", key, err)
	}
	return rec, true, nil
}

// live returns the record under key if a caller may read or write it.
func (w *writer) live(key []byte, id string) (record, error) {
	rec, found, err := w.lookup(key)
	if err != nil {
		return record{}, err
	}
	if !found || !rec.visible(w.now.Unix()) {
		return record{}, fmt.Errorf("document %s: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// create conflicts with any unexpired document, soft-deleted ones included:
// like Cosmos DB, a soft-deleted id stays taken until its ttl runs out.
func (w *writer) create(partitionKey string, body []byte) (store.Item, string, error) {
	obj, meta, err := storedoc.Parse(body, partitionKey)
	if err != nil {
		return store.Item{}, idOf(body), err
	}
	key := docKey(partitionKey, meta.ID)
	prev, found, err := w.lookup(key)
	if err != nil {
		return store.Item{}, meta.ID, err
	}
	if found && !prev.expired(w.now.Unix()) {
		return store.Item{}, meta.ID, fmt.Errorf("document %s: %w", meta.ID, store.ErrConflict)
	}
	if found { // an expired leftover the sweeper has not reached yet
		if err := w.drop(key, prev); err != nil {
			return store.Item{}, meta.ID, err
		}
	}
	item, err := w.put(key, nil, obj, meta)
	return item, meta.ID, err
}

func (w *writer) replace(partitionKey, id string, body []byte, ifMatch string) (store.Item, error) {
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
	key := docKey(partitionKey, id)
	prev, err := w.live(key, id)
	if err != nil {
		return store.Item{}, err
	}
	if string(prev.etag) != ifMatch {
		return store.Item{}, fmt.Errorf("document %s: If-Match %s, current %s: %w", id, ifMatch, prev.etag, store.ErrPreconditionFailed)
	}
	return w.put(key, &prev, obj, meta)
}

func (w *writer) softDelete(partitionKey, id string) error {
	if err := storedoc.CheckID(id); err != nil {
		return err
	}
	key := docKey(partitionKey, id)
	prev, err := w.live(key, id)
	if err != nil {
		return err
	}
	obj, meta, err := storedoc.SoftDelete(prev.body, partitionKey, w.now)
	if err != nil {
		return fmt.Errorf("document %s: %w", id, err)
	}
	_, err = w.put(key, &prev, obj, meta)
	return err
}

// remove is a batch Delete: a hard delete, which the change feed never shows.
func (w *writer) remove(partitionKey, id, ifMatch string) error {
	if err := storedoc.CheckID(id); err != nil {
		return err
	}
	if ifMatch == "" {
		return fmt.Errorf("%w: delete of document %s has no If-Match etag", store.ErrInvalid, id)
	}
	key := docKey(partitionKey, id)
	prev, err := w.live(key, id)
	if err != nil {
		return err
	}
	if string(prev.etag) != ifMatch {
		return fmt.Errorf("document %s: If-Match %s, current %s: %w", id, ifMatch, prev.etag, store.ErrPreconditionFailed)
	}
	return w.drop(key, prev)
}

// put stores a new version of the document under key. prev is the version it
// replaces, if any, whose index entries it retires.
func (w *writer) put(key []byte, prev *record, obj storedoc.Object, meta storedoc.Meta) (store.Item, error) {
	seq, err := w.feed.NextSequence()
	if err != nil {
		return store.Item{}, err
	}
	rec := record{seq: seq, created: seq, resourceID: []byte(meta.ResourceID)}
	if prev != nil {
		rec.created = prev.created
		if err := w.unindex(key, *prev); err != nil {
			return store.Item{}, err
		}
	}
	ts := w.now.Unix()
	if meta.TTL > 0 {
		rec.expires = ts + meta.TTL
	}
	if meta.Deleted {
		rec.flags |= flagDeleted
	}
	body, etag := storedoc.Stamp(obj, storedoc.System{Seq: seq, Created: rec.created, Now: w.now})
	rec.etag = []byte(etag)
	rec.body = body

	if err := w.docs.Put(key, rec.encode()); err != nil {
		return store.Item{}, err
	}
	if err := w.feed.Put(seqKey(seq), key); err != nil {
		return store.Item{}, err
	}
	if rec.expires != 0 {
		if err := w.expiry.Put(expiryKey(rec.expires, key), nil); err != nil {
			return store.Item{}, err
		}
	}
	if meta.Class != storedoc.ClassNone {
		if err := w.ops.Put(key, []byte{byte(meta.Class)}); err != nil {
			return store.Item{}, err
		}
	}
	return store.Item{Body: body, ETag: etag}, nil
}

// drop removes a document and its index entries.
func (w *writer) drop(key []byte, rec record) error {
	if err := w.unindex(key, rec); err != nil {
		return err
	}
	return w.docs.Delete(key)
}

func (w *writer) unindex(key []byte, rec record) error {
	if err := w.feed.Delete(seqKey(rec.seq)); err != nil {
		return err
	}
	if rec.expires != 0 {
		if err := w.expiry.Delete(expiryKey(rec.expires, key)); err != nil {
			return err
		}
	}
	return w.ops.Delete(key)
}

// idOf names a batch step whose body did not parse, as far as it can.
func idOf(body []byte) string {
	var doc struct {
		ID json.RawMessage `json:"id"`
	}
	var id string
	if json.Unmarshal(body, &doc) != nil || json.Unmarshal(doc.ID, &id) != nil {
		return ""
	}
	return id
}
