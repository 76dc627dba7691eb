package embedded

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// ReadMany reads the documents in one read transaction; a damaged page
// is ErrDamaged, as for Get.
func (s *Store) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	if err := storedoc.CheckReadMany(ctx, refs); err != nil {
		return nil, err
	}
	now := s.now().Unix()
	out := make(map[store.DocRef]store.Item, len(refs))
	err := s.view(func(tx *bolt.Tx) error {
		docs := tx.Bucket(bucketDocs)
		for _, ref := range refs {
			v := docs.Get(docKey(ref.PartitionKey, ref.ID))
			if v == nil {
				continue
			}
			rec, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("document %s in partition %s: %w", ref.ID, ref.PartitionKey, err)
			}
			if rec.Visible(now) {
				out[ref] = itemOf(rec)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %d documents: %w", len(refs), err)
	}
	return out, nil
}
