package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storetest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func newClock() *testsupport.Clock {
	return testsupport.NewClock(time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC))
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		clock := newClock()
		s := New(WithClock(clock))
		t.Cleanup(func() { _ = s.Close() })
		return storetest.Harness{Store: s, Advance: clock.Advance, Clock: clock, Foreign: func(t *testing.T) store.Store {
			f := New(WithClock(clock))
			t.Cleanup(func() { _ = f.Close() })
			return f
		}}
	})
}

const pk = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"

func doc(id, extra string) []byte {
	return []byte(`{"id":"` + id + `","partitionKey":"` + pk + `","resourceID":"/subscriptions/` + pk + `/x/` + id + `"` + extra + `}`)
}

func opDoc(id string) []byte {
	return []byte(`{"id":"` + id + `","partitionKey":"` + pk + `",` +
		`"resourceID":"/subscriptions/` + pk + `/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/` + id + `",` +
		`"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"status":"Accepted"}}`)
}

func mustCreate(t *testing.T, s *Store, body []byte) store.Item {
	t.Helper()
	item, err := s.Create(context.Background(), pk, body)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return item
}

// What a caller does with the bytes it was given is its own business.
func TestItemsAreCopies(t *testing.T) {
	s := New(WithClock(newClock()))
	created := mustCreate(t, s, doc("a", ""))
	clear(created.Body)
	got, err := s.Get(context.Background(), pk, "a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	clear(got.Body)
	again, err := s.Get(context.Background(), pk, "a")
	if err != nil || !strings.HasPrefix(string(again.Body), `{"id":"a"`) {
		t.Errorf("stored body after callers cleared theirs = %q, %v", again.Body, err)
	}
}

// A page callback runs without the lock: it may write to the store, as the
// poll tick writes the operations it lists.
func TestPageCallbackMayWrite(t *testing.T) {
	ctx := context.Background()
	s := New(WithClock(newClock()))
	for i := range 5 {
		mustCreate(t, s, opDoc(fmt.Sprintf("op%d", i)))
	}
	seen := 0
	err := s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 2}, func(items []store.Item) error {
		for _, it := range items {
			seen++
			if err := s.SoftDelete(ctx, pk, store.TopLevelID(it.Body)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || seen != 5 {
		t.Fatalf("ActiveOperations = %v after %d operations, want 5 soft-deleted on the way", err, seen)
	}
	if ids := activeIDs(t, s); len(ids) != 0 {
		t.Errorf("after soft-deleting each as it came: active %v", ids)
	}
}

func activeIDs(t *testing.T, s *Store) []string {
	t.Helper()
	var ids []string
	err := s.ActiveOperations(context.Background(), store.ActiveOperationsQuery{}, func(items []store.Item) error {
		for _, it := range items {
			ids = append(ids, store.TopLevelID(it.Body))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ActiveOperations: %v", err)
	}
	return ids
}

// Expired documents leave memory with the next write, and rewrites leave
// the feed no longer than the documents, while positions taken before
// stay good.
func TestExpiredAndRewrittenAreReclaimed(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := New(WithClock(clock))
	for i := range 50 {
		mustCreate(t, s, doc(fmt.Sprintf("short%d", i), `,"ttl":5`))
	}
	keep := mustCreate(t, s, doc("keep", ""))
	mid, err := s.ChangeFeed(ctx, "", 51)
	if err != nil {
		t.Fatalf("ChangeFeed: %v", err)
	}
	clock.Advance(5 * time.Second)
	for range 200 {
		if keep, err = s.Replace(ctx, pk, "keep", doc("keep", ""), keep.ETag); err != nil {
			t.Fatalf("Replace: %v", err)
		}
	}
	s.mu.RLock()
	docs, feed := len(s.docs), len(s.feed)
	s.mu.RUnlock()
	if docs != 1 || feed > 64 {
		t.Errorf("after 50 expiries and 200 rewrites of one document: %d documents, %d feed entries; want 1 and at most 64", docs, feed)
	}
	page, err := s.ChangeFeed(ctx, mid.Continuation, 100)
	if err != nil || len(page.Items) != 1 || page.Items[0].ETag != keep.ETag {
		t.Errorf("feed from a position taken before = %d items, %v; want keep at its latest etag", len(page.Items), err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := New()
	mustCreate(t, s, doc("a", ""))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	noop := func([]store.Item) error { return nil }
	for name, err := range map[string]error{
		"Get":              func() error { _, err := s.Get(ctx, pk, "a"); return err }(),
		"Create":           func() error { _, err := s.Create(ctx, pk, doc("b", "")); return err }(),
		"ReadMany":         func() error { _, err := s.ReadMany(ctx, []store.DocRef{{PartitionKey: pk, ID: "a"}}); return err }(),
		"ActiveOperations": s.ActiveOperations(ctx, store.ActiveOperationsQuery{}, noop),
		"Children":         s.Children(ctx, pk, "/subscriptions/"+pk, noop),
		"ChangeFeed":       func() error { _, err := s.ChangeFeed(ctx, "", 10); return err }(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s on a closed store = %v, want ErrClosed", name, err)
		}
	}
}
