package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

// testBatch writes an operation and its resource together, as the frontend
// and the poller do, then deletes in a batch.
func testBatch(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "rg", "c1")
	np := nestedDoc(sub, cluster.ResourceID(), "nodePools", "np1")
	clusterItem := mustCreate(t, s, sub, cluster)
	npItem := mustCreate(t, s, sub, np)

	op := operationDoc(sub, "Accepted")
	cluster.Set("properties.serviceProviderProperties.provisioningState", "Updating")
	items, err := s.Batch(ctx, sub, []store.BatchOp{
		{Kind: store.OpCreate, Body: op.JSON(t)},
		{Kind: store.OpReplace, ID: cluster.ID(), Body: cluster.JSON(t), IfMatch: clusterItem.ETag},
		{Kind: store.OpDelete, ID: np.ID(), IfMatch: npItem.ETag},
	})
	if err != nil {
		t.Fatalf("Batch: %v", err)
	}
	if len(items) != 3 {
		t.Fatalf("Batch returned %d items, want 3", len(items))
	}
	if got := mustGet(t, s, sub, op.ID()); got.ETag != items[0].ETag {
		t.Errorf("created operation etag = %s, batch said %s", got.ETag, items[0].ETag)
	}
	got := mustGet(t, s, sub, cluster.ID())
	if got.ETag != items[1].ETag || got.ETag == clusterItem.ETag {
		t.Errorf("replaced cluster etag = %s, batch said %s, old %s", got.ETag, items[1].ETag, clusterItem.ETag)
	}
	if state, _ := decode(t, got.Body).lookup("properties.serviceProviderProperties.provisioningState"); state != "Updating" {
		t.Errorf("cluster provisioningState = %v, want Updating", state)
	}
	wantNotFound(t, s, sub, np.ID())
	// The etag a batch returns is good for the next write.
	if _, err := s.Replace(ctx, sub, op.ID(), op.JSON(t), items[0].ETag); err != nil {
		t.Errorf("Replace with the batch's etag: %v", err)
	}
}

func testBatchRollback(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.Store
	type fixture struct {
		sub         string
		cluster, np doc
		clusterItem store.Item
		npItem      store.Item
		newOp       doc
	}
	setup := func(t *testing.T) fixture {
		f := fixture{sub: newSubscription()}
		f.cluster = clusterDoc(f.sub, "rg", "c1")
		f.np = nestedDoc(f.sub, f.cluster.ResourceID(), "nodePools", "np1")
		f.clusterItem = mustCreate(t, s, f.sub, f.cluster)
		f.npItem = mustCreate(t, s, f.sub, f.np)
		f.newOp = operationDoc(f.sub, "Accepted")
		return f
	}
	updated := func(t testing.TB, f fixture) []byte {
		return f.cluster.Set("properties.serviceProviderProperties.provisioningState", "Deleting").JSON(t)
	}
	tests := []struct {
		name    string
		ops     func(t testing.TB, f fixture) []store.BatchOp
		wantOp  store.OpKind
		wantID  func(f fixture) string
		wantErr error
	}{
		{
			name: "create conflicts",
			ops: func(t testing.TB, f fixture) []store.BatchOp {
				return []store.BatchOp{
					{Kind: store.OpCreate, Body: f.newOp.JSON(t)},
					{Kind: store.OpReplace, ID: f.cluster.ID(), Body: updated(t, f), IfMatch: f.clusterItem.ETag},
					{Kind: store.OpCreate, Body: f.np.JSON(t)},
				}
			},
			wantOp: store.OpCreate, wantID: func(f fixture) string { return f.np.ID() }, wantErr: store.ErrConflict,
		},
		{
			name: "replace with a stale etag",
			ops: func(t testing.TB, f fixture) []store.BatchOp {
				return []store.BatchOp{
					{Kind: store.OpCreate, Body: f.newOp.JSON(t)},
					{Kind: store.OpDelete, ID: f.np.ID(), IfMatch: f.npItem.ETag},
					{Kind: store.OpReplace, ID: f.cluster.ID(), Body: updated(t, f), IfMatch: f.npItem.ETag},
				}
			},
			wantOp: store.OpReplace, wantID: func(f fixture) string { return f.cluster.ID() }, wantErr: store.ErrPreconditionFailed,
		},
		{
			name: "replace of a missing document",
			ops: func(t testing.TB, f fixture) []store.BatchOp {
				missing := operationDoc(f.sub, "Accepted")
				return []store.BatchOp{
					{Kind: store.OpCreate, Body: f.newOp.JSON(t)},
					{Kind: store.OpReplace, ID: f.cluster.ID(), Body: updated(t, f), IfMatch: f.clusterItem.ETag},
					{Kind: store.OpReplace, ID: missing.ID(), Body: missing.JSON(t), IfMatch: f.clusterItem.ETag},
				}
			},
			wantOp: store.OpReplace, wantID: nil, wantErr: store.ErrNotFound,
		},
		{
			name: "delete with a stale etag",
			ops: func(t testing.TB, f fixture) []store.BatchOp {
				return []store.BatchOp{
					{Kind: store.OpCreate, Body: f.newOp.JSON(t)},
					{Kind: store.OpReplace, ID: f.cluster.ID(), Body: updated(t, f), IfMatch: f.clusterItem.ETag},
					{Kind: store.OpDelete, ID: f.np.ID(), IfMatch: f.clusterItem.ETag},
				}
			},
			wantOp: store.OpDelete, wantID: func(f fixture) string { return f.np.ID() }, wantErr: store.ErrPreconditionFailed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			ops := tc.ops(t, f)
			items, err := s.Batch(ctx, f.sub, ops)
			if err == nil {
				t.Fatalf("Batch succeeded with %d items, want step 2 to fail", len(items))
			}
			var be *store.BatchError
			if !errors.As(err, &be) {
				t.Fatalf("Batch err = %v (%T), want a *store.BatchError", err, err)
			}
			wantID := ops[2].ID
			if tc.wantID != nil {
				wantID = tc.wantID(f)
			}
			if be.Index != 2 || be.Op != tc.wantOp || be.ID != wantID || !errors.Is(err, tc.wantErr) {
				t.Errorf("BatchError = {%d %s %s %v}, want {2 %s %s %v}", be.Index, be.Op, be.ID, be.Err, tc.wantOp, wantID, tc.wantErr)
			}
			// Nothing of the batch happened.
			wantNotFound(t, s, f.sub, f.newOp.ID())
			for _, want := range []struct {
				d    doc
				item store.Item
			}{{f.cluster, f.clusterItem}, {f.np, f.npItem}} {
				got := mustGet(t, s, f.sub, want.d.ID())
				if got.ETag != want.item.ETag || !reflect.DeepEqual(decode(t, got.Body), decode(t, want.item.Body)) {
					t.Errorf("%s changed by a failed batch:\n%s\nwant\n%s", want.d.ID(), got.Body, want.item.Body)
				}
			}
		})
	}
}
