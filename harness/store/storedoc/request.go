package storedoc

import (
	"context"
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// The checks below are a read's arguments refused before the store is
// touched, with the same words from every store that keeps its own
// documents.

// CheckRequest checks a point request on one document.
func CheckRequest(ctx context.Context, partitionKey, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckPartitionKey(partitionKey); err != nil {
		return err
	}
	return CheckID(id)
}

// CheckReadMany checks a ReadMany call.
func CheckReadMany(ctx context.Context, refs []store.DocRef) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reading %d documents: %w", len(refs), err)
	}
	if err := store.CheckReadMany(refs, CheckPartitionKey, CheckID); err != nil {
		return fmt.Errorf("reading %d documents: %w", len(refs), err)
	}
	return nil
}

// ActiveOperationsPageSize checks an ActiveOperations call and returns the
// page size to stream it in.
func ActiveOperationsPageSize(q store.ActiveOperationsQuery, page func([]store.Item) error) (int, error) {
	size, err := PageSize(q.PageSize)
	if err != nil {
		return 0, fmt.Errorf("listing active operations: %w", err)
	}
	if page == nil {
		return 0, fmt.Errorf("listing active operations: %w: page callback is nil", store.ErrInvalid)
	}
	return size, nil
}

// ActiveOperations is a store's ActiveOperations around scan, the store's
// walk of its operations index in pages of size: the call checked, the
// query's filter (document.Class.Listed, the one rule), and the error's
// context. scan hands page what passes listed and is live.
func ActiveOperations(q store.ActiveOperationsQuery, page func([]store.Item) error, scan func(size int, listed func(document.Class) bool) error) error {
	size, err := ActiveOperationsPageSize(q, page)
	if err != nil {
		return err
	}
	if err := scan(size, func(c document.Class) bool { return c.Listed(q.WithPendingNotification) }); err != nil {
		return fmt.Errorf("listing active operations: %w", err)
	}
	return nil
}

// ChildrenPrefix checks a Children call and returns the resourceID prefix
// that its documents have, to be compared with HasPrefixFold.
func ChildrenPrefix(partitionKey, parentResourceID string, page func([]store.Item) error) (string, error) {
	if err := CheckPartitionKey(partitionKey); err != nil {
		return "", fmt.Errorf("listing children: %w", err)
	}
	if parentResourceID == "" {
		return "", fmt.Errorf("listing children in partition %s: %w: parent resource ID is empty", store.KeyLabel(partitionKey), store.ErrInvalid)
	}
	if page == nil {
		return "", fmt.Errorf("listing children in partition %s: %w: page callback is nil", store.KeyLabel(partitionKey), store.ErrInvalid)
	}
	return parentResourceID + "/", nil
}

// CheckPartition checks a Partition call.
func CheckPartition(partitionKey string, page func([]store.Item) error) error {
	if err := CheckPartitionKey(partitionKey); err != nil {
		return fmt.Errorf("listing a partition: %w", err)
	}
	if page == nil {
		return fmt.Errorf("listing partition %s: %w: page callback is nil", store.KeyLabel(partitionKey), store.ErrInvalid)
	}
	return nil
}

// FeedRequest is a checked ChangeFeed call: where to start and how much to
// read.
type FeedRequest struct {
	// After is the position to read after, unless FromTime.
	After uint64
	// FromTime asks for the changes at or after Since instead.
	FromTime bool
	Since    time.Time
	Size     int
}

// ParseFeedRequest checks a ChangeFeed call. parse reads a continuation
// the store issued ("" is 0); its error says why it is not one, wrapping
// store.ErrFeedGap.
func ParseFeedRequest(ctx context.Context, continuation string, maxItems int, parse func(string) (uint64, error)) (FeedRequest, error) {
	if err := ctx.Err(); err != nil {
		return FeedRequest{}, fmt.Errorf("reading change feed: %w", err)
	}
	var r FeedRequest
	var err error
	if r.Since, r.FromTime, err = store.ParseFeedSince(continuation); err != nil {
		return FeedRequest{}, fmt.Errorf("reading change feed: %w", err)
	}
	if !r.FromTime {
		if r.After, err = parse(continuation); err != nil {
			return FeedRequest{}, fmt.Errorf("reading change feed: %w", err)
		}
	}
	if r.Size, err = PageSize(maxItems); err != nil {
		return FeedRequest{}, fmt.Errorf("reading change feed: %w", err)
	}
	return r, nil
}
