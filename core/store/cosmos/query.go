package cosmos

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// OperationResourceType is the resourceType of ARO-HCP operation documents;
// it is compared case-insensitively because its casing follows the ARM id.
const OperationResourceType = "Microsoft.RedHatOpenShift/hcpOperationStatuses"

// ARO-HCP's ListActiveOperations filter, kept in its words so the two stay
// comparable.
const (
	activeOperationsBase = "SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @type, true)" +
		" AND LENGTH(c.resourceID) > 0 AND NOT IS_DEFINED(c.deletionTimestamp)"
	notTerminal         = `NOT ARRAYCONTAINS(["Succeeded","Failed","Canceled"], c.properties.status)`
	pendingNotification = "(IS_STRING(c.properties.notificationUri) AND LENGTH(c.properties.notificationUri) > 0)"

	activeOperationsQuery      = activeOperationsBase + " AND " + notTerminal
	activeOrNotificationsQuery = activeOperationsBase + " AND (" + notTerminal + " OR " + pendingNotification + ")"

	childrenQuery = "SELECT * FROM c WHERE STARTSWITH(c.resourceID, @prefix, true) AND NOT IS_DEFINED(c.deletionTimestamp)"
)

// ActiveOperations streams the non-terminal operations of every partition
// (and, if asked, terminal ones with a notification still to send), one
// service page at a time.
func (s *Store) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	if err := store.CheckPageSize("page size", q.PageSize); err != nil {
		return fmt.Errorf("listing active operations: %w", err)
	}
	query := activeOperationsQuery
	if q.WithPendingNotification {
		query = activeOrNotificationsQuery
	}
	params := []azcosmos.QueryParameter{{Name: "@type", Value: OperationResourceType}}
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
