package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
)

// crashingStore fails one soft delete, as a process killed between two
// writes would leave things: everything before it written, nothing after.
type crashingStore struct {
	store.Store
	mu      sync.Mutex
	n, at   int // fail the at-th soft delete
	crashed bool
}

func (c *crashingStore) SoftDelete(ctx context.Context, pk, id string) error {
	c.mu.Lock()
	c.n++
	fail := c.n == c.at && !c.crashed
	c.crashed = c.crashed || fail
	c.mu.Unlock()
	if fail {
		return errors.New("simulated crash between child deletes")
	}
	return c.Store.SoftDelete(ctx, pk, id)
}

func (c *crashingStore) didCrash() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed
}

// TestDeleteCompletionThroughHandler: a cluster delete driven by the host's
// payloads soft-deletes the cluster and its direct children of every type
// but controller status; a crash between two child deletes leaves the
// operation running and the next tick finishes it.
func TestDeleteCompletionThroughHandler(t *testing.T) {
	crash := &crashingStore{at: 3} // the cluster, one child, then the crash
	r := newARMRigWith(t, nil, nil, func(s store.Store) store.Store { crash.Store = s; return crash })
	ctx := context.Background()
	c1 := clusterRID("c1")
	create := r.accepted(r.fe.PutCluster(ctx, c1, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, r.opts()))
	r.drive(create)
	children := map[string]bool{ // resource ID: deleted
		c1 + "/serviceProviderClusters/default":         true,
		c1 + "/managementClusterContents/hostedcluster": true,
		c1 + "/someFutureThings/x":                      true,
		c1 + "/hcpOpenShiftControllers/ClusterCreate":   false,
		c1 + "/serviceProviderClusters/default/deep/x":  false,
	}
	for rid := range children {
		if rid == c1+"/serviceProviderClusters/default" {
			continue // hcpops wrote it with the cluster's active version
		}
		typ := arm.ClusterResourceType + "/" + strings.Join(typesOf(strings.TrimPrefix(rid, c1+"/")), "/")
		r.put(`{"id":"` + document.CosmosID(rid) + `","partitionKey":"` + sub + `","resourceID":"` + rid +
			`","resourceType":"` + typ + `","properties":{"cosmosMetadata":{"resourceID":"` + rid + `","instanceVersion":1,"partitionKey":"` + sub + `"}}}`)
	}

	del := r.accepted(r.fe.Delete(ctx, c1, r.opts()))
	for round := 0; round < 30 && !crash.didCrash(); round++ {
		r.deliver()
		r.invoke("/pollOperations", r.tickPayload)
		if !crash.didCrash() {
			r.Sim.Advance(time.Minute)
		}
	}
	if !crash.didCrash() {
		t.Fatal("the delete never reached its completion")
	}
	if got := r.op(del.Name()); got.Properties.Status.IsTerminal() {
		t.Fatalf("after the crash the delete is %s; want it still running", got.Properties.Status)
	}
	if got := r.get(resultPath(del.Name()), caller()...); got.status != 202 {
		t.Fatalf("result after the crash: %d, want 202", got.status)
	}
	r.drive(del)
	if got := r.op(del.Name()); got.Properties.Status != arm.ProvisioningStateSucceeded {
		t.Fatalf("delete: %s %+v", got.Properties.Status, got.Properties.Error)
	}
	for rid, deleted := range children {
		_, err := r.App.Store.Get(ctx, sub, document.CosmosID(rid))
		if gone := errors.Is(err, store.ErrNotFound); gone != deleted {
			t.Errorf("%s: deleted %v, want %v (%v)", rid, gone, deleted, err)
		}
	}
	if _, err := r.App.Store.Get(ctx, sub, document.CosmosID(c1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cluster: %v, want it soft-deleted", err)
	}
	if got := r.get(resultPath(del.Name()), caller()...); got.status != 204 {
		t.Errorf("delete result: %d, want 204", got.status)
	}
}

// typesOf keeps the type segments of a relative resource path (type/name/type/name...).
func typesOf(rel string) []string {
	var out []string
	for i, s := range strings.Split(rel, "/") {
		if i%2 == 0 {
			out = append(out, s)
		}
	}
	return out
}
