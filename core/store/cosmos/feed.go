package cosmos

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// MaxFeedItems caps one change-feed read, whatever the caller asks.
const MaxFeedItems = 1000

// wholeContainer is the feed range covering every partition key.
var wholeContainer = azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}

// ChangeFeed reads up to maxItems changes after continuation (latest version
// of each changed document, in change order; expired documents are left out). The continuation is the SDK's
// composite token: opaque, and it survives partition splits.
func (s *Store) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	if maxItems <= 0 || maxItems > store.MaxPageSize {
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w: page size (maxItems) %d, want 1 to %d", store.ErrInvalid, maxItems, store.MaxPageSize)
	}
	opts := &azcosmos.ChangeFeedOptions{MaxItemCount: int32(min(maxItems, MaxFeedItems))}
	if continuation == "" {
		fr := wholeContainer
		opts.FeedRange = &fr
	} else {
		if err := checkContinuation(continuation); err != nil {
			return store.FeedPage{}, fmt.Errorf("reading change feed: %w", err)
		}
		opts.Continuation = &continuation
	}
	resp, err := s.resources.ReadChangeFeed(ctx, opts)
	if err != nil {
		return store.FeedPage{}, mapError(err, "reading change feed")
	}
	page := store.FeedPage{Items: make([]store.Item, 0, len(resp.Items)), Continuation: resp.ContinuationToken}
	if page.Continuation == "" {
		page.Continuation = continuation
	}
	now := s.now()
	for _, body := range resp.Items {
		m, err := readMeta(body)
		if err != nil {
			return store.FeedPage{}, fmt.Errorf("reading change feed: %w", err)
		}
		if m.expired(now) { // soft-deleted versions stay: they are changes too
			continue
		}
		page.Items = append(page.Items, store.Item{Body: body, ETag: m.ETag})
	}
	return page, nil
}

// checkContinuation rejects what the SDK would silently ignore (and then
// fail on for lack of a feed range): anything but a composite token.
func checkContinuation(continuation string) error {
	var token struct {
		Continuation []json.RawMessage `json:"continuation"`
	}
	if err := json.Unmarshal([]byte(continuation), &token); err != nil || len(token.Continuation) == 0 {
		return fmt.Errorf("%w: continuation %.80q is not a change-feed token from this store", store.ErrInvalid, continuation)
	}
	return nil
}
