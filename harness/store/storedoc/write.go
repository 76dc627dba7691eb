package storedoc

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/store"
)

// WriteFunc is a store's one way to write: it runs fn as one transaction on
// partitionKey's documents and keeps what fn did only if fn returns nil.
// fn may run more than once (the embedded store reruns a shared commit),
// so it sets what it captures afresh on every run. Its methods are the
// write half of store.Store, so that every store that keeps its own
// documents checks and reports a write alike.
type WriteFunc[K any, V Version] func(ctx context.Context, partitionKey string, fn func(Txn[K, V]) error) error

// Create writes a new document, its id taken from the body.
func (w WriteFunc[K, V]) Create(ctx context.Context, partitionKey string, doc []byte) (store.Item, error) {
	if err := store.CheckDocumentSize(doc); err != nil {
		return store.Item{}, fmt.Errorf("creating document in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	var item store.Item
	err := w(ctx, partitionKey, func(t Txn[K, V]) (err error) {
		item, _, err = Create(t, partitionKey, doc)
		return err
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("creating document in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return item, nil
}

// Replace overwrites a live document whose etag still equals ifMatch.
func (w WriteFunc[K, V]) Replace(ctx context.Context, partitionKey, id string, doc []byte, ifMatch string) (store.Item, error) {
	if err := store.CheckDocumentSize(doc); err != nil {
		return store.Item{}, fmt.Errorf("replacing document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	var item store.Item
	err := w(ctx, partitionKey, func(t Txn[K, V]) (err error) {
		item, err = Replace(t, partitionKey, id, doc, ifMatch)
		return err
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("replacing document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return item, nil
}

// SoftDelete marks a document deleted as ARO-HCP does, in one transaction.
func (w WriteFunc[K, V]) SoftDelete(ctx context.Context, partitionKey, id string) error {
	err := w(ctx, partitionKey, func(t Txn[K, V]) error {
		return SoftDelete(t, partitionKey, id)
	})
	if err != nil {
		return fmt.Errorf("soft-deleting document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return nil
}

// Batch runs ops in one transaction: a failing step discards them all.
func (w WriteFunc[K, V]) Batch(ctx context.Context, partitionKey string, ops []store.BatchOp) ([]store.Item, error) {
	if err := store.CheckBatch(ops); err != nil {
		return nil, fmt.Errorf("batch in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	items := make([]store.Item, len(ops))
	err := w(ctx, partitionKey, func(t Txn[K, V]) error {
		return RunBatch(t, partitionKey, ops, items)
	})
	if err != nil {
		return nil, fmt.Errorf("batch in partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return items, nil
}
