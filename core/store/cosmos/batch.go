package cosmos

import (
	"context"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// Batch runs ops as one Cosmos transactional batch on partitionKey. A step
// that fails becomes a *store.BatchError naming it; Cosmos has then rolled
// the whole batch back.
func (s *Store) Batch(ctx context.Context, partitionKey string, ops []store.BatchOp) ([]store.Item, error) {
	if err := checkPartitionKey(partitionKey); err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	// The local test server enforces none of Cosmos DB's batch limits.
	if err := store.CheckBatch(ops); err != nil {
		return nil, fmt.Errorf("batch on %s: %w", store.KeyLabel(partitionKey), err)
	}
	pk := azcosmos.NewPartitionKeyString(partitionKey)
	batch := s.resources.NewTransactionalBatch(pk)
	ids := make([]string, len(ops))
	for i, op := range ops {
		id, err := addBatchOp(&batch, op, partitionKey)
		if err != nil {
			return nil, &store.BatchError{Index: i, Op: op.Kind, ID: op.ID, Err: err}
		}
		ids[i] = id
	}
	resp, err := s.resources.ExecuteTransactionalBatch(ctx, batch,
		&azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		return nil, mapError(err, "batch of %d on %s", len(ops), partitionKey)
	}
	if len(resp.OperationResults) != len(ops) {
		return nil, fmt.Errorf("batch of %d on %s: service answered %d results", len(ops), store.KeyLabel(partitionKey), len(resp.OperationResults))
	}
	if !resp.Success {
		return nil, batchFailure(ops, ids, resp.OperationResults)
	}
	items := make([]store.Item, len(ops))
	for i, r := range resp.OperationResults {
		if ops[i].Kind == store.OpDelete {
			continue
		}
		items[i] = store.Item{Body: r.ResourceBody, ETag: string(r.ETag)}
	}
	return items, nil
}

// addBatchOp validates op and appends it to batch, returning the document id.
func addBatchOp(batch *azcosmos.TransactionalBatch, op store.BatchOp, pk string) (string, error) {
	switch op.Kind {
	case store.OpCreate:
		id, err := checkDocument(op.Body, pk)
		if err != nil {
			return "", err
		}
		batch.CreateItem(op.Body, nil)
		return id, nil
	case store.OpReplace:
		if op.IfMatch == "" {
			return "", fmt.Errorf("%w: replace of %q has no IfMatch etag", store.ErrInvalid, op.ID)
		}
		id, err := checkDocument(op.Body, pk)
		if err != nil {
			return "", err
		}
		if id != op.ID {
			return "", fmt.Errorf("%w: replace of %q has body field id %q", store.ErrInvalid, op.ID, id)
		}
		etag := azcore.ETag(op.IfMatch)
		batch.ReplaceItem(op.ID, op.Body, &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag})
		return op.ID, nil
	case store.OpDelete:
		if op.IfMatch == "" {
			return "", fmt.Errorf("%w: delete of %q has no IfMatch etag", store.ErrInvalid, op.ID)
		}
		if err := checkID(op.ID); err != nil {
			return "", err
		}
		etag := azcore.ETag(op.IfMatch)
		batch.DeleteItem(op.ID, &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag})
		return op.ID, nil
	default:
		return "", fmt.Errorf("%w: operation kind %q, want Create, Replace or Delete", store.ErrInvalid, op.Kind)
	}
}

// batchFailure finds the step that failed: every other step answers 424.
func batchFailure(ops []store.BatchOp, ids []string, results []azcosmos.TransactionalBatchResult) error {
	for i, r := range results {
		if r.StatusCode == http.StatusFailedDependency {
			continue
		}
		cause := fmt.Errorf("status %d", r.StatusCode)
		if sentinel := sentinelFor(int(r.StatusCode)); sentinel != nil {
			cause = fmt.Errorf("%w (status %d)", sentinel, r.StatusCode)
		}
		return &store.BatchError{Index: i, Op: ops[i].Kind, ID: ids[i], Err: cause}
	}
	return fmt.Errorf("batch failed but every step answered %d", http.StatusFailedDependency)
}
