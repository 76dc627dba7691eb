package cosmos

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// Leases is the leases container (partitioned on /id): where a change-feed
// reader outside the Functions host keeps its positions, beside the
// host's own lease documents, which it never touches.
type Leases struct {
	c *azcosmos.ContainerClient
}

// Leases opens the leases container of the store's database.
func (s *Store) Leases() (*Leases, error) {
	c, err := s.database.NewContainer(LeasesContainer)
	if err != nil {
		return nil, fmt.Errorf("opening container %s: %w", LeasesContainer, err)
	}
	return &Leases{c: c}, nil
}

// Get reads lease id; store.ErrNotFound when there is none.
func (l *Leases) Get(ctx context.Context, id string) (store.Item, error) {
	resp, err := l.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(id), id, nil)
	if err != nil {
		return store.Item{}, mapError(err, "reading lease %s", id)
	}
	return store.Item{Body: resp.Value, ETag: string(resp.ETag)}, nil
}

// Put writes lease doc (its id is its partition key): a create when
// ifMatch is empty (store.ErrConflict if another writer made it first),
// else a replace guarded by ifMatch (store.ErrPreconditionFailed if it
// changed since it was read).
func (l *Leases) Put(ctx context.Context, doc []byte, ifMatch string) (store.Item, error) {
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(doc, &head); err != nil || head.ID == "" {
		return store.Item{}, fmt.Errorf("writing lease: %w: document has no id", store.ErrInvalid)
	}
	if err := store.CheckAddress(head.ID, head.ID); err != nil {
		return store.Item{}, fmt.Errorf("writing lease: %w", err)
	}
	pk := azcosmos.NewPartitionKeyString(head.ID)
	opts := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}
	var (
		resp azcosmos.ItemResponse
		err  error
	)
	if ifMatch == "" {
		resp, err = l.c.CreateItem(ctx, pk, doc, opts)
	} else {
		etag := azcore.ETag(ifMatch)
		opts.IfMatchEtag = &etag
		resp, err = l.c.ReplaceItem(ctx, pk, head.ID, doc, opts)
	}
	if err != nil {
		return store.Item{}, mapError(err, "writing lease %s", head.ID)
	}
	return store.Item{Body: resp.Value, ETag: string(resp.ETag)}, nil
}
