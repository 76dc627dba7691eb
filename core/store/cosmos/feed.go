package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// MaxFeedItems caps one change-feed read, whatever the caller asks.
const MaxFeedItems = 1000

// wholeContainer is the feed range covering every partition key.
var wholeContainer = azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}

// ChangeFeed reads up to maxItems changes after continuation (latest version
// of each changed document, in change order; expired documents are left out).
// The continuation is the SDK's composite token: opaque, and it survives
// partition splits. store.FeedSince starts from a time (If-Modified-Since).
func (s *Store) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	if maxItems <= 0 {
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w: maxItems %d, want > 0", store.ErrInvalid, maxItems)
	}
	since, fromTime, err := store.ParseFeedSince(continuation)
	if err != nil {
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w", err)
	}
	opts := &azcosmos.ChangeFeedOptions{MaxItemCount: int32(min(maxItems, MaxFeedItems))}
	switch {
	case continuation == "" || fromTime:
		fr := wholeContainer
		opts.FeedRange = &fr
		if fromTime {
			opts.StartFrom = &since
		}
	default:
		if err := checkContinuation(continuation); err != nil {
			return store.FeedPage{}, fmt.Errorf("reading change feed: %w", err)
		}
		opts.Continuation = &continuation
	}
	resp, err := s.resources.ReadChangeFeed(ctx, opts)
	if err != nil {
		return store.FeedPage{}, feedError(err, continuation)
	}
	page := store.FeedPage{Items: make([]store.Item, 0, len(resp.Items)), Continuation: resp.ContinuationToken}
	if !positioned(page.Continuation) {
		// No position came back (an idle feed answered without an etag):
		// start the same way next time rather than from the beginning.
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

// compositeToken is the part of the SDK's continuation this store reads.
type compositeToken struct {
	Continuation []struct {
		ContinuationToken *string `json:"continuationToken"`
	} `json:"continuation"`
}

// checkContinuation rejects what the SDK would silently ignore (and then
// fail on for lack of a feed range): anything but a composite token.
func checkContinuation(continuation string) error {
	var token compositeToken
	if err := json.Unmarshal([]byte(continuation), &token); err != nil || len(token.Continuation) == 0 {
		return fmt.Errorf("%w (%w): continuation %.80q is not a change-feed token from this store", store.ErrFeedGap, store.ErrInvalid, continuation)
	}
	return nil
}

// positioned says every range of a composite token has a position; a
// range without one would be read from the beginning.
func positioned(continuation string) bool {
	var token compositeToken
	if json.Unmarshal([]byte(continuation), &token) != nil || len(token.Continuation) == 0 {
		return false
	}
	for _, r := range token.Continuation {
		if r.ContinuationToken == nil || *r.ContinuationToken == "" {
			return false
		}
	}
	return true
}

// feedError maps a refused continuation to store.ErrFeedGap: the SDK's
// own check that the token belongs to this container (it was recreated
// since, or the token is another's), and the service's 400 for a position
// it does not know.
func feedError(err error, continuation string) error {
	var re *azcore.ResponseError
	switch {
	case strings.Contains(err.Error(), "does not match the current container's ResourceID"):
		return fmt.Errorf("reading change feed: %w: %w", store.ErrFeedGap, err)
	case continuation != "" && errors.As(err, &re) && re.StatusCode == http.StatusBadRequest:
		return fmt.Errorf("reading change feed: %w: %w", store.ErrFeedGap, err)
	}
	return mapError(err, "reading change feed")
}
