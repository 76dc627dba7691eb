package storedoc

import (
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Version is one stored version of a document, as its store keeps it.
type Version interface {
	// Expired applies Cosmos DB's rule at now (unix seconds): gone once
	// _ts + ttl <= now.
	Expired(now int64) bool
	// Visible is what callers may read or write: neither expired nor
	// soft-deleted.
	Visible(now int64) bool
	// HasETag compares without the copy ETag may cost.
	HasETag(etag string) bool
	ETag() string
	// Body is the document as stored, system fields included.
	Body() []byte
}

// Txn is one write transaction of a store that keeps its own documents:
// the few primitives on its own structures (bbolt buckets, a staged map)
// that the write rules below run on, so that every such store applies the
// same rules. K is the store's document key, V its stored version.
type Txn[K any, V Version] interface {
	// Now is the transaction's time, one for all of its steps.
	Now() time.Time
	Key(partitionKey, id string) K
	// Lookup is the version under k as the transaction sees it, expired
	// or not.
	Lookup(k K) (V, bool, error)
	// Insert stores the first version of a document under k.
	Insert(k K, obj document.Object, meta Meta) (store.Item, error)
	// Update stores a new version over prev, the one Lookup found under k.
	Update(k K, prev V, obj document.Object, meta Meta) (store.Item, error)
	// Drop removes prev, the version under k, and what indexes it.
	Drop(k K, prev V) error
}

// Create conflicts with any unexpired document, soft-deleted ones included:
// like Cosmos DB, a soft-deleted id stays taken until its ttl runs out. It
// also returns the id it read, to name a failed batch step.
func Create[K any, V Version](t Txn[K, V], partitionKey string, body []byte) (store.Item, string, error) {
	obj, meta, err := Parse(body, partitionKey)
	if err != nil {
		return store.Item{}, store.TopLevelID(body), err
	}
	k := t.Key(partitionKey, meta.ID)
	prev, found, err := t.Lookup(k)
	if err != nil {
		return store.Item{}, meta.ID, err
	}
	if found && !prev.Expired(t.Now().Unix()) {
		return store.Item{}, meta.ID, fmt.Errorf("document %s: %w", meta.ID, store.ErrConflict)
	}
	if found { // an expired leftover no sweep has reached yet
		if err := t.Drop(k, prev); err != nil {
			return store.Item{}, meta.ID, err
		}
	}
	item, err := t.Insert(k, obj, meta)
	return item, meta.ID, err
}

// Replace overwrites a live document whose etag still equals ifMatch.
func Replace[K any, V Version](t Txn[K, V], partitionKey, id string, body []byte, ifMatch string) (store.Item, error) {
	if err := CheckID(id); err != nil {
		return store.Item{}, err
	}
	if ifMatch == "" {
		return store.Item{}, fmt.Errorf("%w: replace of document %s has no If-Match etag", store.ErrInvalid, id)
	}
	obj, meta, err := Parse(body, partitionKey)
	if err != nil {
		return store.Item{}, err
	}
	if meta.ID != id {
		return store.Item{}, fmt.Errorf("%w: body field id is %q, want %q", store.ErrInvalid, meta.ID, id)
	}
	k := t.Key(partitionKey, id)
	prev, err := matching(t, k, id, ifMatch)
	if err != nil {
		return store.Item{}, err
	}
	return t.Update(k, prev, obj, meta)
}

// SoftDelete marks a live document deleted as ARO-HCP does. Reading and
// writing in one transaction is the If-Match write without the retry.
func SoftDelete[K any, V Version](t Txn[K, V], partitionKey, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	k := t.Key(partitionKey, id)
	prev, err := live(t, k, id)
	if err != nil {
		return err
	}
	obj, meta, err := softDeleted(prev.Body(), partitionKey, t.Now())
	if err != nil {
		return fmt.Errorf("document %s: %w", id, err)
	}
	_, err = t.Update(k, prev, obj, meta)
	return err
}

// Remove is a batch Delete: a hard delete, which the change feed never shows.
func Remove[K any, V Version](t Txn[K, V], partitionKey, id, ifMatch string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if ifMatch == "" {
		return fmt.Errorf("%w: delete of document %s has no If-Match etag", store.ErrInvalid, id)
	}
	k := t.Key(partitionKey, id)
	prev, err := matching(t, k, id, ifMatch)
	if err != nil {
		return err
	}
	return t.Drop(k, prev)
}

// RunBatch runs ops in order on t, putting step i's result in items[i],
// and stops at the first step that fails, with a BatchError naming it; the
// store then discards all of t. items is the caller's, as long as ops, so
// that a rerun transaction costs no new one.
func RunBatch[K any, V Version](t Txn[K, V], partitionKey string, ops []store.BatchOp, items []store.Item) error {
	clear(items) // a rolled-back run may have filled some
	for i, op := range ops {
		var err error
		id := op.ID
		switch op.Kind {
		case store.OpCreate:
			items[i], id, err = Create(t, partitionKey, op.Body)
		case store.OpReplace:
			items[i], err = Replace(t, partitionKey, op.ID, op.Body, op.IfMatch)
		case store.OpDelete:
			err = Remove(t, partitionKey, op.ID, op.IfMatch)
		default:
			err = fmt.Errorf("%w: unknown batch op kind %q", store.ErrInvalid, op.Kind)
		}
		if err != nil {
			return &store.BatchError{Index: i, Op: op.Kind, ID: id, Err: err}
		}
	}
	return nil
}

// live is the version under k if a caller may read or write it.
func live[K any, V Version](t Txn[K, V], k K, id string) (V, error) {
	prev, found, err := t.Lookup(k)
	if err != nil {
		return prev, err
	}
	if !found || !prev.Visible(t.Now().Unix()) {
		return prev, fmt.Errorf("document %s: %w", id, store.ErrNotFound)
	}
	return prev, nil
}

// matching is the live version under k if its etag is still ifMatch.
func matching[K any, V Version](t Txn[K, V], k K, id, ifMatch string) (V, error) {
	prev, err := live(t, k, id)
	if err != nil {
		return prev, err
	}
	if !prev.HasETag(ifMatch) {
		return prev, fmt.Errorf("document %s: If-Match %s, current %s: %w", id, ifMatch, prev.ETag(), store.ErrPreconditionFailed)
	}
	return prev, nil
}
