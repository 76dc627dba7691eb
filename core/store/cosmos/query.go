package cosmos

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

const (
	childrenQuery  = "SELECT * FROM c WHERE STARTSWITH(c.resourceID, @prefix, true) AND NOT IS_DEFINED(c.deletionTimestamp)"
	partitionQuery = "SELECT * FROM c WHERE NOT IS_DEFINED(c.deletionTimestamp)"
)

// ActiveOperations streams the non-terminal operations of every partition
// (and, if asked, terminal ones with a notification still to send), one
// service page at a time.
func (s *Store) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	if err := store.CheckPageSize("page size", q.PageSize); err != nil {
		return fmt.Errorf("listing active operations: %w", err)
	}
	query := document.ActiveOperationsQuery // as document.Classify has it
	if q.WithPendingNotification {
		query = document.ActiveOrPendingQuery
	}
	params := []azcosmos.QueryParameter{{Name: document.ActiveOperationsTypeParameter, Value: arm.OperationResourceType}}
	// An empty partition key makes the query cross-partition.
	if err := s.query(ctx, query, azcosmos.NewPartitionKey(), params, q.PageSize, page); err != nil {
		return fmt.Errorf("listing active operations: %w", err)
	}
	return nil
}

// Children streams the live documents of partitionKey under parentResourceID.
func (s *Store) Children(ctx context.Context, partitionKey, parentResourceID string, page func([]store.Item) error) error {
	if err := checkPartitionKey(partitionKey); err != nil {
		return fmt.Errorf("listing children: %w", err)
	}
	if parentResourceID == "" {
		return fmt.Errorf("listing children in %s: %w: parent resource id is empty", store.KeyLabel(partitionKey), store.ErrInvalid)
	}
	params := []azcosmos.QueryParameter{{Name: "@prefix", Value: parentResourceID + "/"}}
	if err := s.query(ctx, childrenQuery, azcosmos.NewPartitionKeyString(partitionKey), params, 0, page); err != nil {
		return fmt.Errorf("listing children of %s in %s: %w", parentResourceID, store.KeyLabel(partitionKey), err)
	}
	return nil
}

// Partition streams every live document of partitionKey.
func (s *Store) Partition(ctx context.Context, partitionKey string, page func([]store.Item) error) error {
	if err := checkPartitionKey(partitionKey); err != nil {
		return fmt.Errorf("listing a partition: %w", err)
	}
	if err := s.query(ctx, partitionQuery, azcosmos.NewPartitionKeyString(partitionKey), nil, 0, page); err != nil {
		return fmt.Errorf("listing partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return nil
}

// query pages through a query and hands each non-empty page of visible
// documents to page. The gateway may answer empty pages mid-stream, so the
// pager runs until it has no continuation.
func (s *Store) query(ctx context.Context, sql string, pk azcosmos.PartitionKey, params []azcosmos.QueryParameter, pageSize int, page func([]store.Item) error) error {
	if pageSize == 0 {
		pageSize = s.cfg.PageSize
	}
	if pageSize == 0 {
		pageSize = DefaultPageSize
	}
	pager := s.resources.NewQueryItemsPager(sql, pk, &azcosmos.QueryOptions{
		QueryParameters: params,
		PageSizeHint:    int32(min(pageSize, 1<<20)),
	})
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			return mapError(err, "querying")
		}
		now := s.now()
		items := make([]store.Item, 0, len(resp.Items))
		for _, body := range resp.Items {
			m, err := readMeta(body)
			if err != nil {
				return err
			}
			if !m.visible(now) {
				continue
			}
			items = append(items, store.Item{Body: body, ETag: m.ETag})
		}
		if len(items) == 0 {
			continue
		}
		if err := page(items); err != nil {
			return err
		}
	}
	return nil
}
