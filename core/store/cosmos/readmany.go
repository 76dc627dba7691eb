package cosmos

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// ReadMany reads the documents with ReadManyItems, which sends one query
// per physical partition (up to 1000 ids each) where point reads would
// cost one request per document.
func (s *Store) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	if err := store.CheckReadMany(refs, checkPartitionKey, checkID); err != nil {
		return nil, fmt.Errorf("reading %d documents: %w", len(refs), err)
	}
	out := make(map[store.DocRef]store.Item, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	want := make(map[store.DocRef]bool, len(refs))
	identities := make([]azcosmos.ItemIdentity, 0, len(refs))
	for _, r := range refs {
		if !want[r] {
			want[r] = true
			identities = append(identities, azcosmos.ItemIdentity{ID: r.ID, PartitionKey: azcosmos.NewPartitionKeyString(r.PartitionKey)})
		}
	}
	resp, err := s.resources.ReadManyItems(ctx, identities, nil)
	if err != nil {
		return nil, mapError(err, "reading %d documents", len(identities))
	}
	now := s.now()
	for _, body := range resp.Items {
		m, err := readMeta(body)
		if err != nil {
			return nil, fmt.Errorf("reading %d documents: %w", len(identities), err)
		}
		// Matching on both fields also guards against a server that
		// answers from the wrong partition.
		if ref := (store.DocRef{PartitionKey: m.PartitionKey, ID: m.ID}); want[ref] && m.visible(now) {
			out[ref] = store.Item{Body: body, ETag: m.ETag}
		}
	}
	return out, nil
}
