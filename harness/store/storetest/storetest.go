// Package storetest is the one contract suite every store.Store
// implementation runs: the embedded bbolt and the in-memory store on a manual
// clock, the Cosmos
// DB store against a Cosmos-compatible server in real time. It also exports
// benchmarks so both can be measured the same way.
//
// The suite speaks only the store.Store interface. Every test uses fresh
// partition keys and filters cross-partition results (active operations,
// change feed) down to its own partitions, so it also holds when the
// implementation under test shares a container between tests.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
)

// Harness is one store under test and control over its time.
type Harness struct {
	// Store is fresh for the test; the factory that made it closes it (in
	// t.Cleanup).
	Store store.Store
	// Advance moves the store's notion of now forward by d: a store on a
	// fake clock moves the clock, a store on real time sleeps. TTL tests
	// advance by at most a few seconds in small steps.
	Advance func(d time.Duration)
	// Foreign opens another store of the same kind, independent of Store
	// (another file, another database); the feed tests hand its positions
	// to Store, which must refuse them.
	Foreign func(t *testing.T) store.Store
	// Clock is the store's clock; nil means the wall clock.
	Clock clock.Clock
}

func (h Harness) now() time.Time {
	return clock.OrReal(h.Clock).Now()
}

// Run runs the whole contract suite, one subtest per behaviour, each with a
// harness of its own.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"CreateGetReplace", testCreateGetReplace},
		{"ReadMany", testReadMany},
		{"SystemFields", testSystemFields},
		{"Errors", testErrors},
		{"Limits", testLimits},
		{"Batch", testBatch},
		{"BatchRollback", testBatchRollback},
		{"SoftDelete", testSoftDelete},
		{"TTL", testTTL},
		{"ActiveOperations", testActiveOperations},
		{"ActiveOperationsPaging", testActiveOperationsPaging},
		{"Children", testChildren},
		{"Partition", testPartition},
		{"ChangeFeed", testChangeFeed},
		{"ChangeFeedDeletes", testChangeFeedDeletes},
		{"ChangeFeedSince", testChangeFeedSince},
		{"ChangeFeedGap", testChangeFeedGap},
		{"ConcurrentIncrements", testConcurrentIncrements},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if h.Store == nil || h.Advance == nil || h.Foreign == nil {
				t.Fatal("harness lacks a Store, Advance or Foreign")
			}
			tc.run(t, h)
		})
	}
}

func mustCreate(t testing.TB, s store.Store, pk string, d doc) store.Item {
	t.Helper()
	item, err := s.Create(context.Background(), pk, d.JSON(t))
	if err != nil {
		t.Fatalf("Create %s: %v", d.ID(), err)
	}
	if item.ETag == "" {
		t.Fatalf("Create %s returned an empty etag", d.ID())
	}
	return item
}

func mustGet(t testing.TB, s store.Store, pk, id string) store.Item {
	t.Helper()
	item, err := s.Get(context.Background(), pk, id)
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	return item
}

func wantNotFound(t testing.TB, s store.Store, pk, id string) {
	t.Helper()
	item, err := s.Get(context.Background(), pk, id)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get %s = %s, %v; want ErrNotFound", id, item.Body, err)
	}
}

// decode parses a stored body into a document.
func decode(t testing.TB, body []byte) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("stored body is not JSON: %v\n%s", err, body)
	}
	return d
}

// lookup returns the value at a dotted path, and whether it is there.
func (d doc) lookup(path string) (any, bool) {
	var cur any = map[string]any(d)
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// withoutSystemFields drops what the store owns, for comparing bodies.
func (d doc) withoutSystemFields() doc {
	out := doc{}
	for k, v := range d {
		switch k {
		case "_rid", "_self", "_etag", "_attachments", "_ts", "_lsn":
		default:
			out[k] = v
		}
	}
	return out
}

// roundTrip is what a document looks like after JSON encoding, for
// comparing what was written with what was read.
func roundTrip(t testing.TB, d doc) doc {
	t.Helper()
	return decode(t, d.JSON(t))
}

// collect drains a streamed query, checking every page's size.
func collect(t testing.TB, maxPage int, run func(page func([]store.Item) error) error) (items []store.Item, pages int) {
	t.Helper()
	err := run(func(page []store.Item) error {
		pages++
		if len(page) == 0 {
			t.Errorf("page %d is empty", pages)
		}
		if maxPage > 0 && len(page) > maxPage {
			t.Errorf("page %d has %d items, want at most %d", pages, len(page), maxPage)
		}
		items = append(items, page...)
		return nil
	})
	if err != nil {
		t.Fatalf("streaming query: %v", err)
	}
	return items, pages
}

// idsIn returns the ids of items in partitions pks, in order.
func idsIn(t testing.TB, items []store.Item, pks ...string) []string {
	t.Helper()
	var ids []string
	for _, it := range items {
		d := decode(t, it.Body)
		for _, pk := range pks {
			if d["partitionKey"] == pk {
				ids = append(ids, d.ID())
			}
		}
	}
	return ids
}

// eventually advances time in steps until cond holds or max has passed.
func eventually(t testing.TB, h Harness, max time.Duration, what string, cond func() bool) {
	t.Helper()
	const step = 250 * time.Millisecond
	for waited := time.Duration(0); !cond(); waited += step {
		if waited >= max {
			t.Fatalf("%s: still not true after %s", what, max)
		}
		h.Advance(step)
	}
}

// jsonMarshal and jsonUnmarshal are for goroutines, which must not call
// t.Fatal.
func jsonMarshal(d doc) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("marshalling document: %w", err)
	}
	return b, nil
}

func jsonUnmarshal(b []byte, d *doc) error {
	if err := json.Unmarshal(b, d); err != nil {
		return fmt.Errorf("stored body is not JSON: %w", err)
	}
	return nil
}
