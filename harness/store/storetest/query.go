package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

func testActiveOperations(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.Store
	sub1, sub2 := newSubscription(), newSubscription()

	var active, pending []string // ids expected without / only with WithPendingNotification
	create := func(sub string, d doc, isActive, isPending bool) {
		mustCreate(t, s, sub, d)
		if isActive {
			active = append(active, d.ID())
		}
		if isPending {
			pending = append(pending, d.ID())
		}
	}
	for _, status := range []string{"Accepted", "Provisioning", "Updating", "Deleting", "AwaitingSecret"} {
		create(sub1, operationDoc(sub1, status), true, false)
	}
	create(sub2, operationDoc(sub2, "Accepted"), true, false) // another partition
	for _, status := range []string{"Succeeded", "Failed", "Canceled"} {
		create(sub1, operationDoc(sub1, status), false, false)
	}
	// Missing and null status: NOT ARRAYCONTAINS([terminal...], undefined)
	// is true in Cosmos DB, so they count as active (an unreadable
	// operation is polled rather than forgotten).
	create(sub1, operationDoc(sub1, "").Delete("properties.status"), true, false)
	create(sub2, operationDoc(sub2, "").Set("properties.status", nil), true, false)
	// resourceType matches case-insensitively.
	create(sub1, operationDoc(sub1, "Accepted").Set("resourceType", "microsoft.redhatopenshift/HCPOPERATIONSTATUSES"), true, false)
	// Terminal, but ARM still waits for the notification.
	create(sub1, operationDoc(sub1, "Failed").Set("properties.notificationUri", "https://arm.example/notify/1"), false, true)
	create(sub2, operationDoc(sub2, "Succeeded").Set("properties.notificationUri", "https://arm.example/notify/2"), false, true)
	// Terminal with the notification already sent.
	create(sub1, operationDoc(sub1, "Succeeded").Set("properties.notificationUri", ""), false, false)
	// Non-terminal with a notification: active either way.
	create(sub1, operationDoc(sub1, "Provisioning").Set("properties.notificationUri", "https://arm.example/notify/3"), true, false)
	// Not operations, or not valid ones.
	create(sub1, clusterDoc(sub1, "rg", "c1"), false, false)
	create(sub1, operationDoc(sub1, "Accepted").Set("resourceID", ""), false, false)
	deleted := operationDoc(sub1, "Accepted")
	create(sub1, deleted, false, false)
	if err := s.SoftDelete(ctx, sub1, deleted.ID()); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}

	tests := []struct {
		name string
		q    store.ActiveOperationsQuery
		want []string
	}{
		{"non-terminal", store.ActiveOperationsQuery{PageSize: 4}, active},
		{"with pending notifications", store.ActiveOperationsQuery{PageSize: 4, WithPendingNotification: true}, append(slices.Clone(active), pending...)},
		{"default page size", store.ActiveOperationsQuery{}, active},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items, _ := collect(t, tc.q.PageSize, func(page func([]store.Item) error) error {
				return s.ActiveOperations(ctx, tc.q, page)
			})
			got := idsIn(t, items, sub1, sub2)
			if !sameSet(got, tc.want) {
				t.Errorf("ActiveOperations = %v\nwant (any order) %v", got, tc.want)
			}
		})
	}

	t.Run("callback error stops the stream", func(t *testing.T) {
		stop := errors.New("stop here")
		calls := 0
		err := s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 1}, func([]store.Item) error {
			calls++
			return stop
		})
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("err = %v after %d calls, want the callback's error after 1", err, calls)
		}
	})
}

// testActiveOperationsPaging checks that a result larger than a page comes
// in several bounded pages with nothing lost or repeated.
func testActiveOperationsPaging(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.Store
	subs := []string{newSubscription(), newSubscription(), newSubscription()}
	var want []string
	for i := range 25 {
		sub := subs[i%len(subs)]
		d := operationDoc(sub, "Provisioning")
		mustCreate(t, s, sub, d)
		want = append(want, d.ID())
	}
	items, pages := collect(t, 10, func(page func([]store.Item) error) error {
		return s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 10}, page)
	})
	got := idsIn(t, items, subs...)
	if !sameSet(got, want) || len(got) != len(want) {
		t.Errorf("got %d operations %v\nwant %d %v", len(got), got, len(want), want)
	}
	if pages < 3 {
		t.Errorf("25 operations came in %d pages of at most 10", pages)
	}
}

func testChildren(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "myRG", "myCluster")
	mustCreate(t, s, sub, cluster)
	parent := cluster.ResourceID()

	np1 := nestedDoc(sub, parent, "nodePools", "np1")
	// Stored with different casing than the parent we ask for.
	np2 := nestedDoc(sub, "/SUBSCRIPTIONS/"+sub+"/resourcegroups/MYRG/providers/microsoft.redhatopenshift/hcpopenshiftclusters/MYCLUSTER", "nodePools", "np2")
	ea := nestedDoc(sub, parent, "externalAuths", "ea1")
	gone := nestedDoc(sub, parent, "nodePools", "gone")
	// Not children: a sibling whose name extends the parent's, another cluster's pool.
	sibling := clusterDoc(sub, "myRG", "myCluster2")
	siblingPool := nestedDoc(sub, sibling.ResourceID(), "nodePools", "np1")
	for _, d := range []doc{np1, np2, ea, gone, sibling, siblingPool} {
		mustCreate(t, s, sub, d)
	}
	if err := s.SoftDelete(ctx, sub, gone.ID()); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	// The same pool in another partition is not this cluster's.
	other := newSubscription()
	mustCreate(t, s, other, nestedDoc(sub, parent, "nodePools", "np3").Set("partitionKey", other))

	want := []string{np1.ID(), np2.ID(), ea.ID()}
	for _, ask := range []string{parent, lowerASCII(parent)} {
		items, _ := collect(t, 0, func(page func([]store.Item) error) error {
			return s.Children(ctx, sub, ask, page)
		})
		if got := idsIn(t, items, sub, other); !sameSet(got, want) || len(got) != len(want) {
			t.Errorf("Children(%s) = %v, want %v", ask, got, want)
		}
	}
}

// testPartition: every live document of the partition, whatever its
// resourceID (none, the subscription's own, another subscription's), and
// nothing of another partition or soft-deleted.
func testPartition(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "myRG", "myCluster")
	pool := nestedDoc(sub, cluster.ResourceID(), "nodePools", "np1")
	op := operationDoc(sub, "Provisioning")
	bare := doc{"id": "no-resource-id", "partitionKey": sub}
	foreign := clusterDoc(newSubscription(), "rg", "elsewhere").Set("partitionKey", sub)
	gone := nestedDoc(sub, cluster.ResourceID(), "nodePools", "gone")
	for _, d := range []doc{cluster, pool, op, bare, foreign, gone} {
		mustCreate(t, s, sub, d)
	}
	if err := s.SoftDelete(ctx, sub, gone.ID()); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	other := newSubscription()
	mustCreate(t, s, other, clusterDoc(other, "myRG", "myCluster"))

	items, _ := collect(t, 0, func(page func([]store.Item) error) error { return s.Partition(ctx, sub, page) })
	want := []string{cluster.ID(), pool.ID(), op.ID(), bare.ID(), foreign.ID()}
	if got := idsIn(t, items, sub, other); !sameSet(got, want) || len(got) != len(want) {
		t.Errorf("Partition(%s) = %v, want %v", sub, got, want)
	}
	if err := s.Partition(ctx, "", func([]store.Item) error { return nil }); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Partition with an empty partition key: %v, want ErrInvalid", err)
	}
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// sameSet reports whether a and b hold the same ids, each once.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
