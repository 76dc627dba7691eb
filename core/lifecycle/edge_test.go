package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// opDoc returns the change-feed copy of operation name from docs.
func opDoc(t *testing.T, docs []json.RawMessage, name string) json.RawMessage {
	t.Helper()
	for _, d := range docs {
		if k, _ := document.Sniff(d); k == document.KindOperation {
			if op, err := document.ParseOperation(d); err == nil && op.Name() == name {
				return d
			}
		}
	}
	t.Fatalf("operation %s not in the feed", name)
	return nil
}

func TestChildWaitsForItsCluster(t *testing.T) {
	e := newEnv(t)
	cl := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	np := e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{})
	docs := e.feed(t)
	res, err := e.engine.DispatchDocuments(context.Background(), []json.RawMessage{opDoc(t, docs, np)})
	if err != nil || res.Deferred != 1 {
		t.Fatalf("node pool before its cluster = %+v, %v; want it deferred", res, err)
	}
	if _, err := e.engine.DispatchDocuments(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	e.drive(t, cl, np)
	e.wantOp(t, cl, arm.ProvisioningStateSucceeded, "")
	e.wantOp(t, np, arm.ProvisioningStateSucceeded, "")
}

func TestDeleteOfAResourceCSNeverHad(t *testing.T) {
	e := newEnv(t)
	create := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	ops := e.remove(t, clusterRID("c1"), request{}) // before anything was dispatched
	e.drive(t, ops...)
	e.wantOp(t, create, arm.ProvisioningStateCanceled, arm.CodeCanceled)
	e.wantOp(t, ops[0], arm.ProvisioningStateSucceeded, "")
	if e.resource(t, clusterRID("c1")) != nil {
		t.Errorf("cluster document still exists")
	}
	if got := e.sim.Ledger().Total(); got != 0 {
		t.Errorf("CS saw %d requests, want none", got)
	}
}

func TestDeleteWhoseResourceIsAlreadyGone(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	op := e.remove(t, nodePoolRID("c1", "np1"), request{})[0]
	if err := e.store.Store.SoftDelete(context.Background(), testPK, document.CosmosID(nodePoolRID("c1", "np1"))); err != nil {
		t.Fatal(err)
	}
	if res := e.tick(t); res.Changed != 1 {
		t.Fatalf("tick = %+v, want the operation completed", res)
	}
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

func TestCredentialRequestDuringRevocationIsCanceled(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	revoke := e.revokeCredentials(t, "c1", request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.wantOp(t, revoke, arm.ProvisioningStateDeleting, "")
	req := e.racingCredentialRequest(t, "c1", request{notify: true})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.wantOp(t, req, arm.ProvisioningStateCanceled, arm.CodeCanceled)
	if n := e.sim.Ledger().Count("POST", cs.ClustersMgmtPrefix+"/clusters/{id}/break_glass_credentials"); n != 0 {
		t.Errorf("%d credentials requested during the revocation, want none", n)
	}
	if calls := e.sink.calls(req); len(calls) != 1 || calls[0].Body.Status != arm.ProvisioningStateCanceled {
		t.Errorf("notifications = %+v, want one Canceled", calls)
	}
	e.drive(t, revoke)
	e.wantOp(t, revoke, arm.ProvisioningStateSucceeded, "")
}

func TestUpdateOfAResourceCSNeverHadFails(t *testing.T) {
	e := newEnv(t)
	create := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	update := e.racingUpdate(t, clusterRID("c1"), request{})
	e.drive(t, update)
	// The update took the cluster and, finished, released it: the create
	// is orphaned. Upstream leaves it alone; so does hcpops, and says so.
	e.wantOp(t, create, arm.ProvisioningStateAccepted, "")
	if res := e.tick(t); res.Skipped != 1 || res.SkippedReasons[SkipNoActiveOperation] != 1 {
		t.Errorf("tick = %+v, want the orphaned create skipped for %s", res, SkipNoActiveOperation)
	}
	op := e.wantOp(t, update, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
	if op.Properties.Error.Message != "The cluster was never created, so it cannot be updated." {
		t.Errorf("message = %q", op.Properties.Error.Message)
	}
	if r := e.resource(t, clusterRID("c1")); r.ProvisioningState() != arm.ProvisioningStateFailed || r.ActiveOperationID() != "" {
		t.Errorf("cluster = %s, active %q; want Failed and released", r.ProvisioningState(), r.ActiveOperationID())
	}
	if got := e.sim.Ledger().Total(); got != 0 {
		t.Errorf("CS saw %d requests, want none", got)
	}
}

// blindSearch is a CS whose search never finds anything, as a CS with a
// lagging search index would answer.
type blindSearch struct{ cs.Client }

func (blindSearch) ListClusters(context.Context, string) ([]cs.Cluster, error) { return nil, nil }

func TestClusterPostConflictIsAdopted(t *testing.T) {
	e := newEnv(t)
	eng, err := New(Deps{Store: e.store, ClusterService: blindSearch{e.cs}, Calls: e.calls, Notifier: nopNotifier{}, Clock: e.clk}, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.engine = eng
	op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	crashed := false
	e.store.setHook(func(_ context.Context, p hookPhase, w write) error {
		if p == beforeWrite && w.contains(`"clusterServiceID"`) && !crashed {
			crashed = true
			return errors.New("simulated crash")
		}
		return nil
	})
	if _, err := e.deliver(t); err == nil {
		t.Fatal("dispatch: want the simulated crash")
	}
	pending := e.resource(t, clusterRID("c1")).PendingClusterServiceID()
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	if got := e.resource(t, clusterRID("c1")).ClusterServiceID(); got != pending {
		t.Errorf("clusterServiceID = %q, want the pending ID %q", got, pending)
	}
	if got := e.csPosts(clustersPOST); got != 2 {
		t.Errorf("cluster POSTs = %d, want the first and the refused second", got)
	}
	clusters, err := e.cs.ListClusters(context.Background(), "")
	if err != nil || len(clusters) != 1 {
		t.Errorf("CS has %d clusters (%v), want 1", len(clusters), err)
	}
}

func TestClusterDeleteLeavesNonResourceChildren(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	controllers := []string{
		clusterRID("c1") + "/hcpOpenShiftControllers/ClusterCreate",
		nodePoolRID("c1", "np1") + "/hcpOpenShiftControllers/NodePoolCreate",
	}
	for _, rid := range controllers {
		doc := obj{"id": document.CosmosID(rid), "partitionKey": testPK, "resourceID": rid,
			"resourceType": arm.ClusterResourceType + "/hcpOpenShiftControllers", "properties": obj{}}
		if _, err := e.store.Store.Create(context.Background(), testPK, mustJSON(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	ops := e.remove(t, clusterRID("c1"), request{})
	// The cluster's delete goes first, so its children meet CS refusing
	// their own deletes: the cluster is uninstalling already.
	docs := e.feed(t)
	if _, err := e.engine.DispatchDocuments(context.Background(), []json.RawMessage{opDoc(t, docs, ops[0])}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.engine.DispatchDocuments(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	e.drive(t, ops...)
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	}
	if !strings.Contains(e.logs.String(), "parent cluster is already uninstalling") {
		t.Errorf("the node pool delete did not meet the uninstalling refusal")
	}
	for _, rid := range controllers {
		if _, err := e.store.Get(context.Background(), testPK, document.CosmosID(rid)); err != nil {
			t.Errorf("controller document %s: %v, want it left alone", rid, err)
		}
	}
}
