package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

func testCreateGetReplace(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "myRG", "myCluster").
		Set("properties.customerProperties.unmodelled", map[string]any{"nested": []any{1.0, "two", nil}})
	created := mustCreate(t, s, sub, cluster)
	if got, want := decode(t, created.Body).withoutSystemFields(), roundTrip(t, cluster); !reflect.DeepEqual(got, want) {
		t.Fatalf("Create returned body\n%v\nwant\n%v", got, want)
	}

	got := mustGet(t, s, sub, cluster.ID())
	if got.ETag != created.ETag {
		t.Errorf("Get etag = %s, want the create's %s", got.ETag, created.ETag)
	}
	if d := decode(t, got.Body).withoutSystemFields(); !reflect.DeepEqual(d, roundTrip(t, cluster)) {
		t.Errorf("Get body\n%v\nwant (every field kept)\n%v", d, roundTrip(t, cluster))
	}

	cluster.Set("properties.serviceProviderProperties.provisioningState", "Provisioning")
	replaced, err := s.Replace(ctx, sub, cluster.ID(), cluster.JSON(t), got.ETag)
	if err != nil {
		t.Fatalf("Replace with the current etag: %v", err)
	}
	if replaced.ETag == "" || replaced.ETag == created.ETag {
		t.Errorf("Replace etag = %q, want a new one (old %q)", replaced.ETag, created.ETag)
	}
	after := decode(t, mustGet(t, s, sub, cluster.ID()).Body)
	if state, _ := after.lookup("properties.serviceProviderProperties.provisioningState"); state != "Provisioning" {
		t.Errorf("after Replace provisioningState = %v, want Provisioning", state)
	}
	if _, ok := after.lookup("properties.customerProperties.unmodelled.nested"); !ok {
		t.Error("Replace lost an unmodelled field")
	}

	// The stale etag now loses, and changes nothing.
	cluster.Set("properties.serviceProviderProperties.provisioningState", "Failed")
	if _, err := s.Replace(ctx, sub, cluster.ID(), cluster.JSON(t), created.ETag); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("Replace with a stale etag: err = %v, want ErrPreconditionFailed", err)
	}
	if cur := mustGet(t, s, sub, cluster.ID()); cur.ETag != replaced.ETag {
		t.Errorf("a failed Replace changed the etag to %s", cur.ETag)
	}

	// The same id in another partition is another document.
	other := newSubscription()
	twin := clusterDoc(sub, "myRG", "myCluster").Set("partitionKey", other)
	mustCreate(t, s, other, twin)
	if a, b := mustGet(t, s, sub, cluster.ID()), mustGet(t, s, other, twin.ID()); a.ETag == b.ETag {
		t.Errorf("two documents share etag %s", a.ETag)
	}
}

func testSystemFields(t *testing.T, h Harness) {
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "rg", "sys").
		Set("_etag", `"caller-etag"`).Set("_ts", 1).Set("_rid", "caller-rid").Set("_self", "caller-self")
	item := mustCreate(t, s, sub, cluster)
	for _, it := range []store.Item{item, mustGet(t, s, sub, cluster.ID())} {
		d := decode(t, it.Body)
		if d["_etag"] != it.ETag {
			t.Errorf("body _etag = %v, want the item's etag %s", d["_etag"], it.ETag)
		}
		if it.ETag == `"caller-etag"` {
			t.Error("the store kept the caller's _etag")
		}
		if ts, ok := d["_ts"].(float64); !ok || ts < 1e9 {
			t.Errorf("body _ts = %v, want Unix seconds", d["_ts"])
		}
		for _, k := range []string{"_rid", "_self", "_attachments"} {
			if v, ok := d[k].(string); !ok || v == "" || v == "caller-rid" || v == "caller-self" {
				t.Errorf("body %s = %v, want the store's own non-empty string", k, d[k])
			}
		}
	}
}

func testErrors(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "rg", "c1")
	item := mustCreate(t, s, sub, cluster)
	missing := clusterDoc(sub, "rg", "missing")

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"get missing", func() error { _, err := s.Get(ctx, sub, missing.ID()); return err }, store.ErrNotFound},
		{"get from another partition", func() error { _, err := s.Get(ctx, newSubscription(), cluster.ID()); return err }, store.ErrNotFound},
		{"create duplicate", func() error { _, err := s.Create(ctx, sub, cluster.JSON(t)); return err }, store.ErrConflict},
		{"replace missing", func() error {
			_, err := s.Replace(ctx, sub, missing.ID(), missing.JSON(t), item.ETag)
			return err
		}, store.ErrNotFound},
		{"replace without etag", func() error { _, err := s.Replace(ctx, sub, cluster.ID(), cluster.JSON(t), ""); return err }, store.ErrInvalid},
		{"create without id", func() error {
			_, err := s.Create(ctx, sub, clusterDoc(sub, "rg", "noid").Delete("id").JSON(t))
			return err
		}, store.ErrInvalid},
		{"create non-object", func() error { _, err := s.Create(ctx, sub, []byte(`["not","an","object"]`)); return err }, store.ErrInvalid},
		{"create non-JSON", func() error { _, err := s.Create(ctx, sub, []byte(`{"id":`)); return err }, store.ErrInvalid},
		{"soft-delete missing", func() error { return s.SoftDelete(ctx, sub, missing.ID()) }, store.ErrNotFound},
		{"empty batch", func() error { _, err := s.Batch(ctx, sub, nil); return err }, store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if got := mustGet(t, s, sub, cluster.ID()); got.ETag != item.ETag {
		t.Errorf("failed calls changed the document: etag %s, want %s", got.ETag, item.ETag)
	}
}

func testSoftDelete(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "rg", "c1")
	mustCreate(t, s, sub, cluster)
	np := nestedDoc(sub, cluster.ResourceID(), "nodePools", "np1").Set("properties.cosmosMetadata.instanceVersion", 4)
	legacy := nestedDoc(sub, cluster.ResourceID(), "externalAuths", "ea1").Delete("properties.cosmosMetadata.instanceVersion")
	op := operationDoc(sub, "Deleting")
	for _, d := range []doc{np, legacy, op} {
		mustCreate(t, s, sub, d)
	}
	// Clocks may be fake, so only sanity-check the time itself.
	before := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

	for _, d := range []doc{np, legacy, op} {
		if err := s.SoftDelete(ctx, sub, d.ID()); err != nil {
			t.Fatalf("SoftDelete %s: %v", d.ID(), err)
		}
		wantNotFound(t, s, sub, d.ID())
		if err := s.SoftDelete(ctx, sub, d.ID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second SoftDelete %s: err = %v, want ErrNotFound", d.ID(), err)
		}
	}
	// Until its ttl runs out the id stays taken, as in Cosmos DB.
	if _, err := s.Create(ctx, sub, np.JSON(t)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Create over a soft-deleted document: err = %v, want ErrConflict", err)
	}

	children, _ := collect(t, 0, func(page func([]store.Item) error) error {
		return s.Children(ctx, sub, cluster.ResourceID(), page)
	})
	if ids := idsIn(t, children, sub); len(ids) != 0 {
		t.Errorf("Children returned soft-deleted %v", ids)
	}
	active, _ := collect(t, 0, func(page func([]store.Item) error) error {
		return s.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, page)
	})
	if ids := idsIn(t, active, sub); len(ids) != 0 {
		t.Errorf("ActiveOperations returned soft-deleted %v", ids)
	}

	// The change feed shows the soft-deleted versions: that is how the
	// fields are observable at all.
	latest := feedLatest(t, s, sub)
	wantVersion := map[string]float64{np.ID(): 5, legacy.ID(): 2, op.ID(): 2}
	for id, version := range wantVersion {
		d, ok := latest[id]
		if !ok {
			t.Errorf("change feed lacks soft-deleted %s", id)
			continue
		}
		if ts, _ := d["deletionTimestamp"].(string); !parsesAfter(ts, before) {
			t.Errorf("%s deletionTimestamp = %q, want RFC 3339 now", id, d["deletionTimestamp"])
		}
		if d["ttl"] != 30.0 {
			t.Errorf("%s ttl = %v, want 30", id, d["ttl"])
		}
		if v, _ := d.lookup("properties.cosmosMetadata.instanceVersion"); v != version {
			t.Errorf("%s instanceVersion = %v, want %v", id, v, version)
		}
	}
	if _, ok := latest[cluster.ID()]; !ok {
		t.Error("change feed lacks the cluster")
	}
}

func parsesAfter(ts string, after time.Time) bool {
	parsed, err := time.Parse(time.RFC3339Nano, ts)
	return err == nil && parsed.After(after)
}

func testTTL(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	// A ttl of 3 on whole-second _ts leaves at least two seconds of real
	// time for the checks before expiry, even on a loaded machine.
	short := clusterDoc(sub, "rg", "short").Set("ttl", 3)
	forever := clusterDoc(sub, "rg", "forever").Set("ttl", -1)
	plain := clusterDoc(sub, "rg", "plain")
	op := operationDoc(sub, "Provisioning").Set("ttl", 3)
	for _, d := range []doc{short, forever, plain, op} {
		mustCreate(t, s, sub, d)
	}
	mustGet(t, s, sub, short.ID())
	if ids := activeIDs(t, s, sub); !reflect.DeepEqual(ids, []string{op.ID()}) {
		t.Fatalf("ActiveOperations before expiry = %v, want [%s]", ids, op.ID())
	}

	eventually(t, h, 10*time.Second, "document with ttl 3 expires", func() bool {
		_, err := s.Get(ctx, sub, short.ID())
		return errors.Is(err, store.ErrNotFound)
	})
	eventually(t, h, 10*time.Second, "operation with ttl 3 leaves ActiveOperations", func() bool {
		return len(activeIDs(t, s, sub)) == 0
	})
	mustGet(t, s, sub, forever.ID())
	mustGet(t, s, sub, plain.ID())
	if _, ok := feedLatest(t, s, sub)[short.ID()]; ok {
		t.Error("change feed still shows the expired document")
	}
	// An expired id is free again.
	mustCreate(t, s, sub, short)
}

func activeIDs(t testing.TB, s store.Store, pks ...string) []string {
	t.Helper()
	items, _ := collect(t, 0, func(page func([]store.Item) error) error {
		return s.ActiveOperations(context.Background(), store.ActiveOperationsQuery{}, page)
	})
	return idsIn(t, items, pks...)
}
