package embedded

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// write is the store's storedoc.WriteFunc: fn runs in a bbolt write
// transaction, which any failing step rolls back whole, and which
// concurrent writes may share (see committer), so fn may run more than
// once.
func (s *Store) write(ctx context.Context, partitionKey string, fn func(storedoc.Txn[[]byte, record]) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storedoc.CheckPartitionKey(partitionKey); err != nil {
		return err
	}
	now := s.now()
	err := s.abandonOnDamage(func() error {
		return s.commits.update(func(tx *bolt.Tx) error {
			return fn(newWriter(tx, now))
		})
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

// The storedoc.Txn primitives: the write rules themselves are storedoc's.

func (w *writer) Now() time.Time { return w.now }

func (w *writer) Key(partitionKey, id string) []byte { return docKey(partitionKey, id) }

// Lookup returns the stored record under key, expired or not.
func (w *writer) Lookup(key []byte) (record, bool, error) {
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

func (w *writer) Insert(key []byte, obj document.Object, meta storedoc.Meta) (store.Item, error) {
	return w.put(key, nil, obj, meta)
}

func (w *writer) Update(key []byte, prev record, obj document.Object, meta storedoc.Meta) (store.Item, error) {
	return w.put(key, &prev, obj, meta)
}

// Drop removes a document and its index entries.
func (w *writer) Drop(key []byte, rec record) error {
	if err := w.unindex(key, rec); err != nil {
		return err
	}
	return w.docs.Delete(key)
}

// put stores a new version of the document under key. prev is the version it
// replaces, if any, whose index entries it retires.
func (w *writer) put(key []byte, prev *record, obj document.Object, meta storedoc.Meta) (store.Item, error) {
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
	if meta.Class != document.ClassNone {
		if err := w.ops.Put(key, []byte{byte(meta.Class)}); err != nil {
			return store.Item{}, err
		}
	}
	return store.Item{Body: body, ETag: etag}, nil
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
