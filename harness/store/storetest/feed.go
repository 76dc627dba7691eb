package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// feedChange is one change of our partition seen on the feed.
type feedChange struct {
	id   string
	etag string
}

// readFeed reads the feed from continuation to its current end in pages of
// pageSize, keeping the changes of partition pk in order. It checks that no
// page exceeds pageSize and that no page repeats a document.
func readFeed(t testing.TB, s store.Store, continuation string, pageSize int, pk string) ([]feedChange, string) {
	t.Helper()
	var changes []feedChange
	for range 10000 {
		page, err := s.ChangeFeed(context.Background(), continuation, pageSize)
		if err != nil {
			t.Fatalf("ChangeFeed(%q, %d): %v", continuation, pageSize, err)
		}
		if len(page.Items) > pageSize {
			t.Fatalf("ChangeFeed page has %d items, asked for %d", len(page.Items), pageSize)
		}
		if len(page.Items) == 0 {
			return changes, page.Continuation
		}
		seen := map[string]bool{}
		for _, it := range page.Items {
			d := decode(t, it.Body)
			key, _ := d["partitionKey"].(string)
			key += "/" + d.ID()
			if seen[key] {
				t.Errorf("ChangeFeed page holds %s twice", key)
			}
			seen[key] = true
			if d["partitionKey"] == pk {
				changes = append(changes, feedChange{id: d.ID(), etag: it.ETag})
			}
		}
		continuation = page.Continuation
	}
	t.Fatal("ChangeFeed never reached its end")
	return nil, ""
}

// feedLatest returns the latest version of every document of partition pk
// on the feed.
func feedLatest(t testing.TB, s store.Store, pk string) map[string]doc {
	t.Helper()
	latest := map[string]doc{}
	continuation := ""
	for range 10000 {
		page, err := s.ChangeFeed(context.Background(), continuation, 100)
		if err != nil {
			t.Fatalf("ChangeFeed: %v", err)
		}
		if len(page.Items) == 0 {
			return latest
		}
		for _, it := range page.Items {
			if d := decode(t, it.Body); d["partitionKey"] == pk {
				latest[d.ID()] = d
			}
		}
		continuation = page.Continuation
	}
	t.Fatal("ChangeFeed never reached its end")
	return nil
}

func ids(changes []feedChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.id
	}
	return out
}

func testChangeFeed(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	_, start := readFeed(t, s, "", 100, sub) // wherever the feed is now

	a, b, c := clusterDoc(sub, "rg", "a"), clusterDoc(sub, "rg", "b"), clusterDoc(sub, "rg", "c")
	aItem := mustCreate(t, s, sub, a)
	mustCreate(t, s, sub, b)
	mustCreate(t, s, sub, c)
	a.Set("properties.serviceProviderProperties.provisioningState", "Succeeded")
	aLatest, err := s.Replace(ctx, sub, a.ID(), a.JSON(t), aItem.ETag)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}

	// a was written twice: it appears once, at its newest position and version.
	changes, end := readFeed(t, s, start, 2, sub)
	if got, want := ids(changes), []string{b.ID(), c.ID(), a.ID()}; !slices.Equal(got, want) {
		t.Fatalf("feed from start = %v, want %v (b, c, a)", got, want)
	}
	if changes[2].etag != aLatest.ETag {
		t.Errorf("feed shows a at etag %s, want the latest %s", changes[2].etag, aLatest.ETag)
	}

	// Resuming from the continuation just after b replays only c and a.
	afterB := start
	for found := false; !found; {
		page, err := s.ChangeFeed(ctx, afterB, 1)
		if err != nil {
			t.Fatalf("ChangeFeed: %v", err)
		}
		if len(page.Items) != 1 {
			t.Fatalf("ChangeFeed(max 1) returned %d items before reaching b", len(page.Items))
		}
		found = decode(t, page.Items[0].Body).ID() == b.ID()
		afterB = page.Continuation
	}
	rest, _ := readFeed(t, s, afterB, 100, sub)
	if got, want := ids(rest), []string{c.ID(), a.ID()}; !slices.Equal(got, want) {
		t.Errorf("feed after b = %v, want %v (c, a)", got, want)
	}

	// An idle feed returns nothing, and its continuation still works.
	idle, err := s.ChangeFeed(ctx, end, 100)
	if err != nil {
		t.Fatalf("ChangeFeed on an idle feed: %v", err)
	}
	if got := idsIn(t, idle.Items, sub); len(got) != 0 {
		t.Errorf("idle feed returned %v", got)
	}
	d := clusterDoc(sub, "rg", "d")
	mustCreate(t, s, sub, d)
	bItem := mustGet(t, s, sub, b.ID())
	b.Set("properties.serviceProviderProperties.provisioningState", "Failed")
	if _, err := s.Replace(ctx, sub, b.ID(), b.JSON(t), bItem.ETag); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	for _, from := range []string{end, idle.Continuation} {
		changes, _ := readFeed(t, s, from, 100, sub)
		if got, want := ids(changes), []string{d.ID(), b.ID()}; !slices.Equal(got, want) {
			t.Errorf("feed after %q = %v, want %v (d, b)", from, got, want)
		}
	}
}

// testChangeFeedDeletes: hard deletes vanish from the feed (latest-version
// mode); soft deletes are writes and show up.
func testChangeFeedDeletes(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	_, start := readFeed(t, s, "", 100, sub)
	keep, hard, soft := clusterDoc(sub, "rg", "keep"), clusterDoc(sub, "rg", "hard"), clusterDoc(sub, "rg", "soft")
	mustCreate(t, s, sub, keep)
	hardItem := mustCreate(t, s, sub, hard)
	mustCreate(t, s, sub, soft)
	if _, err := s.Batch(ctx, sub, []store.BatchOp{{Kind: store.OpDelete, ID: hard.ID(), IfMatch: hardItem.ETag}}); err != nil {
		t.Fatalf("Batch delete: %v", err)
	}
	if err := s.SoftDelete(ctx, sub, soft.ID()); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	changes, _ := readFeed(t, s, start, 100, sub)
	if got, want := ids(changes), []string{keep.ID(), soft.ID()}; !slices.Equal(got, want) {
		t.Errorf("feed = %v, want %v (keep, soft)", got, want)
	}
}

// testChangeFeedSince: FeedSince(t) starts at the changes written at or
// after t, and from there the feed goes on as from any continuation.
func testChangeFeedSince(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	old, fresh, later := clusterDoc(sub, "rg", "old"), clusterDoc(sub, "rg", "fresh"), clusterDoc(sub, "rg", "later")
	mustCreate(t, s, sub, old)
	h.Advance(1100 * time.Millisecond) // _ts has whole seconds: old is now a second behind
	since := h.now()
	mustCreate(t, s, sub, fresh)

	changes, cont := readFeed(t, s, store.FeedSince(since), 100, sub)
	if got, want := ids(changes), []string{fresh.ID()}; !slices.Equal(got, want) {
		t.Fatalf("feed since %s = %v, want %v (not the older write)", since.Format(time.RFC3339Nano), got, want)
	}
	mustCreate(t, s, sub, later)
	rest, _ := readFeed(t, s, cont, 100, sub)
	if got, want := ids(rest), []string{later.ID()}; !slices.Equal(got, want) {
		t.Errorf("feed after the since page = %v, want %v", got, want)
	}

	// From a time to come: nothing yet, then what is written next.
	future, err := s.ChangeFeed(ctx, store.FeedSince(h.now().Add(time.Hour)), 100)
	if err != nil {
		t.Fatalf("ChangeFeed(since an hour from now): %v", err)
	}
	if got := idsIn(t, future.Items, sub); len(got) != 0 {
		t.Errorf("feed since an hour from now returned %v", got)
	}
	if _, err := s.ChangeFeed(ctx, "since:yesterday", 100); !errors.Is(err, store.ErrFeedGap) {
		t.Errorf("ChangeFeed(since:yesterday) = %v, want ErrFeedGap", err)
	}
}

// testChangeFeedGap: a position the store did not issue is ErrFeedGap, so
// a reader knows to relist instead of skipping or replaying silently.
func testChangeFeedGap(t *testing.T, h Harness) {
	ctx := context.Background()
	foreign := h.Foreign(t)
	fsub := newSubscription()
	for _, name := range []string{"f1", "f2", "f3"} {
		mustCreate(t, foreign, fsub, clusterDoc(fsub, "rg", name))
	}
	_, theirs := readFeed(t, foreign, "", 100, fsub)
	if _, err := h.Store.ChangeFeed(ctx, theirs, 100); !errors.Is(err, store.ErrFeedGap) {
		t.Errorf("ChangeFeed(another store's continuation) = %v, want ErrFeedGap", err)
	}
	if _, err := h.Store.ChangeFeed(ctx, "not-a-continuation", 100); !errors.Is(err, store.ErrFeedGap) {
		t.Errorf("ChangeFeed(garbage) = %v, want ErrFeedGap", err)
	}
	// Its own positions still work.
	if _, err := h.Store.ChangeFeed(ctx, "", 100); err != nil {
		t.Errorf("ChangeFeed from the beginning after a refusal: %v", err)
	}
}
