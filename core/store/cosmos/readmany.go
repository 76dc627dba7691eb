package cosmos

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// ReadMany reads the ids of one partition with ReadManyItems: one query
// request for up to store.MaxReadMany ids in a single logical partition,
// where point reads would cost one request each.
func (s *Store) ReadMany(ctx context.Context, partitionKey string, ids []string) (map[string]store.Item, error) {
	if err := checkReadMany(partitionKey, ids); err != nil {
		return nil, fmt.Errorf("reading %d documents in %s: %w", len(ids), partitionKey, err)
	}
	out := make(map[string]store.Item, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pk := azcosmos.NewPartitionKeyString(partitionKey)
	want := make(map[string]bool, len(ids))
	identities := make([]azcosmos.ItemIdentity, 0, len(ids))
	for _, id := range ids {
		if !want[id] {
			want[id] = true
			identities = append(identities, azcosmos.ItemIdentity{ID: id, PartitionKey: pk})
		}
	}
	resp, err := s.resources.ReadManyItems(ctx, identities, nil)
	if err != nil {
		return nil, mapError(err, "reading %d documents in %s", len(identities), partitionKey)
	}
	now := s.now()
	for _, body := range resp.Items {
		m, err := readMeta(body)
		if err != nil {
			return nil, fmt.Errorf("reading %d documents in %s: %w", len(identities), partitionKey, err)
		}
		// The partition check guards against a server that ignores it.
		if want[m.ID] && m.PartitionKey == partitionKey && m.visible(now) {
			out[m.ID] = store.Item{Body: body, ETag: m.ETag}
		}
	}
	return out, nil
}

func checkReadMany(partitionKey string, ids []string) error {
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
