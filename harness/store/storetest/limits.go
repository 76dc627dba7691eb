package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

// testLimits: what Cosmos DB refuses (an item over 2 MB, a partition key
// over 2 KB, a batch over 100 steps or 2 MB) every store refuses, at the
// write, with ErrInvalid naming the limit; calls that size their own work
// (a page size) are bounded too. Nothing is written, and the store goes on
// working.
func testLimits(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	padded := func(name string, n int) doc {
		return clusterDoc(sub, "rg", name).Set("properties.padding", strings.Repeat("x", n))
	}
	under := padded("under", store.MaxDocumentBytes-64<<10)
	item := mustCreate(t, s, sub, under)
	huge := padded("huge", 22<<20)                 // a 22 MB document, as a runaway writer made
	over := padded("over", store.MaxDocumentBytes) // just over once its other fields count
	longPK := strings.Repeat("a", 70<<10)
	atPK := strings.Repeat("b", store.MaxPartitionKeyBytes)
	overPK := atPK + "b"
	many := make([]store.BatchOp, store.MaxBatchOps+1)
	for i := range many {
		many[i] = store.BatchOp{Kind: store.OpCreate, Body: clusterDoc(sub, "rg", "many"+strings.Repeat("n", i)).JSON(t)}
	}
	heavy := []store.BatchOp{
		{Kind: store.OpCreate, Body: padded("heavy1", store.MaxDocumentBytes/2+1024).JSON(t)},
		{Kind: store.OpCreate, Body: padded("heavy2", store.MaxDocumentBytes/2+1024).JSON(t)},
	}
	noop := func([]store.Item) error { return nil }

	tests := []struct {
		name string
		call func() error
		want string // in the error
	}{
		{"create 22 MB", func() error { _, err := s.Create(ctx, sub, huge.JSON(t)); return err }, "2097152"},
		{"create just over 2 MB", func() error { _, err := s.Create(ctx, sub, over.JSON(t)); return err }, "2097152"},
		{"replace with over 2 MB", func() error {
			_, err := s.Replace(ctx, sub, under.ID(), padded("under", store.MaxDocumentBytes).JSON(t), item.ETag)
			return err
		}, "2097152"},
		{"batch create over 2 MB", func() error {
			_, err := s.Batch(ctx, sub, []store.BatchOp{{Kind: store.OpCreate, Body: huge.JSON(t)}})
			return err
		}, "2097152"},
		{"batch over 2 MB in all", func() error { _, err := s.Batch(ctx, sub, heavy); return err }, "2097152"},
		{"batch over 100 steps", func() error { _, err := s.Batch(ctx, sub, many); return err }, "100"},
		{"create with a 70 KB partition key", func() error {
			_, err := s.Create(ctx, longPK, clusterDoc(longPK, "rg", "k").JSON(t))
			return err
		}, "2048"},
		{"create with a partition key one byte over", func() error {
			_, err := s.Create(ctx, overPK, clusterDoc(overPK, "rg", "k").JSON(t))
			return err
		}, "2048"},
		{"get with a 70 KB partition key", func() error { _, err := s.Get(ctx, longPK, "x"); return err }, "2048"},
		{"batch with a 70 KB partition key", func() error {
			_, err := s.Batch(ctx, longPK, []store.BatchOp{{Kind: store.OpCreate, Body: clusterDoc(longPK, "rg", "k").JSON(t)}})
			return err
		}, "2048"},
		{"children with a 70 KB partition key", func() error { return s.Children(ctx, longPK, "/subscriptions/x", noop) }, "2048"},
		{"active operations page size 1e12", func() error {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 1e12}, noop)
		}, "page size"},
		{"active operations page size 2^62", func() error {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 1 << 62}, noop)
		}, "page size"},
		{"active operations page size one over", func() error {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: store.MaxPageSize + 1}, noop)
		}, "page size"},
		{"change feed of 2^62 items", func() error { _, err := s.ChangeFeed(ctx, "", 1<<62); return err }, "page size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalid naming %q", err, tc.want)
			}
			if err != nil && len(err.Error()) > 4096 {
				t.Errorf("the error quotes the input: %d bytes", len(err.Error()))
			}
		})
	}
	// At the limits: accepted.
	mustCreate(t, s, atPK, clusterDoc(atPK, "rg", "at"))
	if got := mustGet(t, s, sub, under.ID()); got.ETag != item.ETag {
		t.Errorf("refused writes changed a document: etag %s, want %s", got.ETag, item.ETag)
	}
	for _, d := range []doc{huge, over, padded("heavy1", 0), padded("many", 0)} {
		if _, err := s.Get(ctx, sub, d.ID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("refused document %s: Get = %v, want ErrNotFound", d.ID(), err)
		}
	}
}
