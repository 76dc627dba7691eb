package operator

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/store/memory"
)

// readCounter is the real memory store with its reads counted.
type readCounter struct {
	store.Store
	gets, readMany, refs, pages atomic.Int64
}

func (c *readCounter) Get(ctx context.Context, pk, id string) (store.Item, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, pk, id)
}

func (c *readCounter) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	c.readMany.Add(1)
	c.refs.Add(int64(len(refs)))
	return c.Store.ReadMany(ctx, refs)
}

func (c *readCounter) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	return c.Store.ActiveOperations(ctx, q, func(items []store.Item) error {
		c.pages.Add(1)
		return page(items)
	})
}

func (c *readCounter) Children(ctx context.Context, pk, parent string, page func([]store.Item) error) error {
	return c.Store.Children(ctx, pk, parent, func(items []store.Item) error {
		c.pages.Add(1)
		return page(items)
	})
}

// TestOpsListingReadsInBatches: listing 50 active creates reads their
// clusters with one ReadMany, not a Get per row, and every row still gets
// the deadline only its resource gives (a create's is reckoned from it).
func TestOpsListingReadsInBatches(t *testing.T) {
	const n = 50
	ctx := context.Background()
	mem := memory.New()
	fe := frontend.New(mem, clock.Real{}, uuid.NewString)
	sub := "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	for i := range n {
		id := fmt.Sprintf("/subscriptions/%s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c%02d", sub, i)
		if _, err := fe.PutCluster(ctx, id, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, frontend.Options{Location: "eastus"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := lifecycle.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, sub string }{{"every subscription's active", ""}, {"one subscription", sub}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &readCounter{Store: mem}
			rows, err := listOps(ctx, c, cfg, tc.sub, false, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n {
				t.Fatalf("%d rows, want %d", len(rows), n)
			}
			for _, r := range rows {
				if r.Deadline == nil {
					t.Errorf("%s: no deadline; its cluster was not read", r.OperationID)
				}
			}
			if g, m, refs, p := c.gets.Load(), c.readMany.Load(), c.refs.Load(), c.pages.Load(); g != 0 || m != 1 || refs != n {
				t.Errorf("%d Gets and %d ReadMany of %d refs over %d pages; want 0 Gets and one ReadMany of %d", g, m, refs, p, n)
			}
		})
	}
}
