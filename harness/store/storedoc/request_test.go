package storedoc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

func TestRequestChecksNameWhatIsWrong(t *testing.T) {
	page := func([]store.Item) error { return nil }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	gap := func(string) (uint64, error) { return 0, store.ErrFeedGap }
	ctx := context.Background()
	tests := []struct {
		name    string
		err     error
		wantErr error
		want    string // in the message
	}{
		{"point request, cancelled", CheckRequest(cancelled, "p", "a"), context.Canceled, "canceled"},
		{"point request, NUL in the partition key", CheckRequest(ctx, "p\x00", "a"), store.ErrInvalid, "contains NUL"},
		{"point request, bad id", CheckRequest(ctx, "p", "a?b"), store.ErrInvalid, `"a?b"`},
		{"ReadMany, cancelled", CheckReadMany(cancelled, nil), context.Canceled, "reading 0 documents"},
		{"ReadMany, empty id", CheckReadMany(ctx, []store.DocRef{{PartitionKey: "p"}}), store.ErrInvalid, "id is empty"},
		{"ActiveOperations, page size", second(ActiveOperationsPageSize(store.ActiveOperationsQuery{PageSize: -1}, page)), store.ErrInvalid, "page size is -1"},
		{"ActiveOperations, no callback", second(ActiveOperationsPageSize(store.ActiveOperationsQuery{}, nil)), store.ErrInvalid, "page callback is nil"},
		{"Children, empty partition key", second(ChildrenPrefix("", "/r", page)), store.ErrInvalid, "listing children: "},
		{"Children, empty parent", second(ChildrenPrefix("p", "", page)), store.ErrInvalid, "parent resource ID is empty"},
		{"Children, no callback", second(ChildrenPrefix("p", "/r", nil)), store.ErrInvalid, "page callback is nil"},
		{"ChangeFeed, cancelled", second(ParseFeedRequest(cancelled, "", 1, gap)), context.Canceled, "reading change feed"},
		{"ChangeFeed, a continuation not the store's", second(ParseFeedRequest(ctx, "x", 1, gap)), store.ErrFeedGap, "reading change feed"},
		{"ChangeFeed, page size", second(ParseFeedRequest(ctx, "", -1, func(string) (uint64, error) { return 0, nil })), store.ErrInvalid, "page size is -1"},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.wantErr) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %v mentioning %q", tc.name, tc.err, tc.wantErr, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestParseFeedRequest(t *testing.T) {
	ctx := context.Background()
	var parsed []string
	parse := func(c string) (uint64, error) { parsed = append(parsed, c); return 7, nil }
	r, err := ParseFeedRequest(ctx, "c7", 0, parse)
	if err != nil || r.FromTime || r.After != 7 || r.Size != DefaultPageSize {
		t.Errorf("ParseFeedRequest(c7) = %+v, %v; want after 7, default size", r, err)
	}
	r, err = ParseFeedRequest(ctx, "since:2026-01-02T03:04:05Z", 5, parse)
	if err != nil || !r.FromTime || r.Since.Unix() != 1767323045 || r.Size != 5 {
		t.Errorf("ParseFeedRequest(since:…) = %+v, %v; want from 2026-01-02T03:04:05Z, size 5", r, err)
	}
	if len(parsed) != 1 {
		t.Errorf("parse called with %q, want only the position", parsed)
	}
}

// TestActiveOperationsFiltersByTheOneRule: the scan is given the query's
// page size and document.Class.Listed for the query; its error gets the
// call's context, and a bad call never reaches it.
func TestActiveOperationsFiltersByTheOneRule(t *testing.T) {
	page := func([]store.Item) error { return nil }
	for _, withPending := range []bool{false, true} {
		q := store.ActiveOperationsQuery{PageSize: 7, WithPendingNotification: withPending}
		err := ActiveOperations(q, page, func(size int, listed func(document.Class) bool) error {
			if size != 7 || listed(document.ClassNone) || !listed(document.ClassActive) || listed(document.ClassPending) != withPending {
				t.Errorf("withPending %v: size %d, listed none/active/pending = %v/%v/%v", withPending, size,
					listed(document.ClassNone), listed(document.ClassActive), listed(document.ClassPending))
			}
			return errScan
		})
		if !errors.Is(err, errScan) || !strings.HasPrefix(err.Error(), "listing active operations: ") {
			t.Errorf("err = %v, want the scan's, in context", err)
		}
	}
	err := ActiveOperations(store.ActiveOperationsQuery{}, nil, func(int, func(document.Class) bool) error {
		t.Error("scan ran for a call without a page callback")
		return nil
	})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

var errScan = errors.New("scan failed")
