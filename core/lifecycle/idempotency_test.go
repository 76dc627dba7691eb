package lifecycle

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

const (
	nodePoolsPOST     = cs.ClustersPath + "/{id}/node_pools"
	externalAuthsPOST = cs.ClustersPath + "/{id}/external_auth_config/external_auths"
)

func TestRedeliveredBatchIsIdempotent(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c0")
	ops := []string{
		e.create(t, document.KindCluster, clusterRID("c1"), request{}),
		e.create(t, document.KindNodePool, nodePoolRID("c0", "np1"), request{}),
		e.create(t, document.KindExternalAuth, externalAuthRID("c0", "ea1"), request{}),
	}
	docs := e.feed(t)
	first, err := e.engine.DispatchDocuments(context.Background(), docs)
	if err != nil || first.Dispatched != 3 {
		t.Fatalf("first delivery = %+v, %v; want 3 dispatched", first, err)
	}
	writes := e.store.writes.Load()
	requests := e.sim.Ledger().Total()
	again, err := e.engine.DispatchDocuments(context.Background(), docs)
	if err != nil || again.Dispatched != 0 || again.Skipped != again.Operations || again.Operations < 3 {
		t.Fatalf("redelivery = %+v, %v; want every operation skipped", again, err)
	}
	if got := e.store.writes.Load() - writes; got != 0 {
		t.Errorf("redelivery wrote %d documents, want none", got)
	}
	if got := e.sim.Ledger().Total() - requests; got != 0 {
		t.Errorf("redelivery made %d CS requests, want none", got)
	}
	e.drive(t, ops...)
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	}
	for pattern, want := range map[string]int{clustersPOST: 2, nodePoolsPOST: 1, externalAuthsPOST: 1} {
		if got := e.csPosts(pattern); got != want {
			t.Errorf("POST %s: %d requests, want %d", pattern, got, want)
		}
	}
}

// TestConcurrentDispatchCreatesOneObject delivers one batch several times
// at once: twice to the same engine and twice to a second engine (another
// function-app instance) on the same store and CS.
func TestConcurrentDispatchCreatesOneObject(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c0")
	ops := []string{
		e.create(t, document.KindCluster, clusterRID("c1"), request{}),
		e.create(t, document.KindCluster, clusterRID("c2"), request{}),
		e.create(t, document.KindNodePool, nodePoolRID("c0", "np1"), request{}),
	}
	docs := e.feed(t)
	other := e.newEngine(t)
	engines := []*Engine{e.engine, e.engine, other, other}
	results := make([]DispatchResult, len(engines))
	errs := make([]error, len(engines))
	var wg sync.WaitGroup
	for i, eng := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = eng.DispatchDocuments(context.Background(), docs)
		}()
	}
	wg.Wait()
	dispatched := 0
	for i := range engines {
		if errs[i] != nil {
			t.Errorf("delivery %d: %v", i, errs[i])
		}
		dispatched += results[i].Dispatched
	}
	// Each operation is dispatched at least once; a node pool may be
	// recorded by two engines racing (CS refuses the second POST with 409).
	if dispatched < len(ops) {
		t.Errorf("dispatched %d times in all (%+v), want at least %d", dispatched, results, len(ops))
	}
	if got := e.csPosts(clustersPOST) - 1; got > 2 { // c0 was posted by readyCluster
		t.Errorf("cluster POSTs for c1 and c2 = %d, want at most 2", got)
	}
	e.drive(t, ops...)
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	}
	if got := e.csPosts(clustersPOST); got != 3 {
		t.Errorf("cluster POSTs = %d, want exactly one per cluster (3)", got)
	}
	clusters, err := e.cs.ListClusters(context.Background(), "")
	if err != nil || len(clusters) != 3 {
		t.Errorf("CS has %d clusters (%v), want 3", len(clusters), err)
	}
	pools, err := e.cs.GetNodePool(context.Background(), e.resource(t, nodePoolRID("c0", "np1")).ClusterServiceID())
	if err != nil || pools.ID != "np1" {
		t.Errorf("CS node pool = %+v, %v", pools, err)
	}
}

// TestConcurrentDispatchSameEngine: one engine serialises dispatches of an
// operation, so even the GET-then-POST of a node pool happens once.
func TestConcurrentDispatchSameEngine(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c0")
	op := e.create(t, document.KindNodePool, nodePoolRID("c0", "np1"), request{})
	docs := e.feed(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := DispatchResult{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.engine.DispatchDocuments(context.Background(), docs)
			if err != nil {
				t.Errorf("DispatchDocuments: %v", err)
			}
			mu.Lock()
			total.Dispatched += res.Dispatched
			total.Skipped += res.Skipped
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total.Dispatched != 1 || e.csPosts(nodePoolsPOST) != 1 {
		t.Errorf("dispatched %d, POSTs %d; want exactly one of each", total.Dispatched, e.csPosts(nodePoolsPOST))
	}
	if e.engine.locks.size() != 0 {
		t.Errorf("%d dispatch locks left behind", e.engine.locks.size())
	}
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

func TestDispatchIgnoresWhatIsNotItsWork(t *testing.T) {
	e := newEnv(t)
	name := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	docs := e.feed(t) // the operation and the cluster
	terminal, _ := e.newOp(t, document.RequestCreate, clusterRID("c9"), "", request{})
	terminal.Properties.Status = arm.ProvisioningStateSucceeded
	terminal.ETag = "x"
	body, err := terminal.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs,
		body, // terminal: never dispatched
		json.RawMessage(`{"id":"x","resourceType":"Microsoft.Resources/subscriptions"}`), // not an operation
		json.RawMessage(`[1,2]`), // not even an object
		json.RawMessage(`{"id":"y","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Explode"}}`),
	)
	res, err := e.engine.DispatchDocuments(context.Background(), docs)
	if err != nil {
		t.Fatalf("DispatchDocuments: %v", err)
	}
	want := DispatchResult{Documents: 6, Operations: 3, Dispatched: 1, Skipped: 2}
	if res != want {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	if r := e.resource(t, clusterRID("c1")); r.ClusterServiceID() == "" {
		t.Errorf("the live operation %s was not dispatched", name)
	}
}
