package embedded

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
)

// ReadMany reads the ids of one partition in one read transaction.
func (s *Store) ReadMany(ctx context.Context, partitionKey string, ids []string) (map[string]store.Item, error) {
	if err := checkReadMany(ctx, partitionKey, ids); err != nil {
		return nil, fmt.Errorf("reading %d documents in partition %s: %w", len(ids), partitionKey, err)
	}
	now := s.now().Unix()
	out := make(map[string]store.Item, len(ids))
	err := s.db.View(func(tx *bolt.Tx) error {
		docs := tx.Bucket(bucketDocs)
		for _, id := range ids {
			v := docs.Get(docKey(partitionKey, id))
			if v == nil {
				continue
			}
			rec, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("document %s: %w", id, err)
			}
			if rec.visible(now) {
				out[id] = itemOf(rec)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %d documents in partition %s: %w", len(ids), partitionKey, err)
	}
	return out, nil
}

func checkReadMany(ctx context.Context, partitionKey string, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkPartitionKey(partitionKey); err != nil {
		return err
	}
	if len(ids) > store.MaxReadMany {
		return fmt.Errorf("%w: %d ids, more than %d", store.ErrInvalid, len(ids), store.MaxReadMany)
	}
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return err
		}
	}
	return nil
}
