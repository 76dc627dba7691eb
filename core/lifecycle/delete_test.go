package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// putRaw writes a document of a type this project does not model, as
// another part of the RP would.
func (e *env) putRaw(t testing.TB, rid, resourceType string) {
	t.Helper()
	doc := obj{"id": document.CosmosID(rid), "partitionKey": testPK, "resourceID": rid, "resourceType": resourceType,
		"properties": obj{"cosmosMetadata": obj{"resourceID": rid, "instanceVersion": 3, "partitionKey": testPK}, "spec": obj{"x": 1}}}
	// A cluster's serviceProviderClusters document is there already:
	// hcpops writes its active versions.
	if _, err := e.store.Store.Create(context.Background(), testPK, mustJSON(t, doc)); err != nil && !errors.Is(err, store.ErrConflict) {
		t.Fatal(err)
	}
}

// live reports whether a point read finds the document.
func (e *env) live(t testing.TB, rid string) bool {
	t.Helper()
	_, err := e.store.Store.Get(context.Background(), testPK, document.CosmosID(rid))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// lastVersion is the latest stored version of a document, soft-deleted
// ones included, from the change feed.
func (e *env) lastVersion(t testing.TB, rid string) obj {
	t.Helper()
	id := document.CosmosID(rid)
	var last obj
	cont := ""
	for {
		p, err := e.store.Store.ChangeFeed(context.Background(), cont, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			var m obj
			if json.Unmarshal(it.Body, &m) == nil && m["id"] == id {
				last = m
			}
		}
		if len(p.Items) == 0 {
			return last
		}
		cont = p.Continuation
	}
}

const typePrefix = arm.ClusterResourceType + "/"

// TestDeleteCompletionAsUpstream: the resource and every direct child
// document, of any type, are soft-deleted; controller-status documents,
// grandchildren and look-alike neighbours are left alone.
func TestDeleteCompletionAsUpstream(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	e.readyCluster(t, "c10") // shares c1's ID as a string prefix
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	e.drive(t, e.create(t, document.KindExternalAuth, externalAuthRID("c1", "ea1"), request{}))
	c1 := clusterRID("c1")
	deleted := []string{c1, nodePoolRID("c1", "np1"), externalAuthRID("c1", "ea1"),
		c1 + "/serviceProviderClusters/default", c1 + "/managementClusterContents/hostedcluster", c1 + "/someFutureThings/x"}
	kept := []string{clusterRID("c10"), c1 + "/hcpOpenShiftControllers/ClusterCreate",
		nodePoolRID("c1", "np1") + "/hcpOpenShiftControllers/NodePoolCreate", c1 + "/serviceProviderClusters/default/things/deep"}
	e.putRaw(t, deleted[3], typePrefix+"serviceProviderClusters")
	e.putRaw(t, deleted[4], typePrefix+"managementClusterContents")
	e.putRaw(t, deleted[5], typePrefix+"someFutureThings")
	e.putRaw(t, kept[1], "microsoft.redhatopenshift/hcpopenshiftclusters/HCPOPENSHIFTCONTROLLERS") // casing varies
	e.putRaw(t, kept[2], typePrefix+"nodePools/hcpOpenShiftControllers")
	e.putRaw(t, kept[3], typePrefix+"serviceProviderClusters/things")

	ops := e.remove(t, c1, request{notify: true})
	e.drive(t, ops...)
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	}
	for _, rid := range deleted {
		last := e.lastVersion(t, rid)
		if e.live(t, rid) || last["ttl"] != float64(30) || last["deletionTimestamp"] == nil {
			t.Errorf("%s: not soft-deleted (ttl %v, deletionTimestamp %v)", rid, last["ttl"], last["deletionTimestamp"])
		}
	}
	for _, rid := range kept {
		if !e.live(t, rid) {
			t.Errorf("%s was deleted; upstream leaves it", rid)
		}
	}
	if calls := e.sink.calls(ops[0]); len(calls) != 1 || calls[0].Body.Status != arm.ProvisioningStateSucceeded {
		t.Errorf("notifications = %+v, want one Succeeded", calls)
	}
}

// TestDeleteCompletionCrashBetweenChildren: a failure after the resource
// and one child are deleted leaves the operation non-terminal, and the
// next tick finishes the job without touching what is done.
func TestDeleteCompletionCrashBetweenChildren(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	c1 := clusterRID("c1")
	children := []string{c1 + "/serviceProviderClusters/default", c1 + "/managementClusterContents/a", c1 + "/managementClusterContents/b"}
	for _, rid := range children {
		e.putRaw(t, rid, typePrefix+strings.Split(strings.TrimPrefix(rid, c1+"/"), "/")[0])
	}
	op := e.remove(t, c1, request{notify: true})[0]
	softDeletes, crashed := 0, false
	e.store.setHook(func(_ context.Context, p hookPhase, w write) error {
		if p == beforeWrite && w.kind == "SoftDelete" {
			if softDeletes++; softDeletes == 3 && !crashed {
				crashed = true
				return errors.New("simulated crash")
			}
		}
		return nil
	})
	for round := 0; round < 20; round++ {
		if _, err := e.deliver(t); err != nil {
			t.Logf("dispatch: %v", err)
		}
		if e.tick(t); crashed {
			break // no time passes: soft-deleted documents live 30 s
		}
		e.clk.Advance(time.Minute)
	}
	if !crashed {
		t.Fatal("the delete never reached its completion")
	}
	if got := e.op(t, op); got.Properties.Status.IsTerminal() || len(e.sink.calls(op)) != 0 {
		t.Fatalf("after the crash the operation is %s with %d notifications; want it non-terminal", got.Properties.Status, len(e.sink.calls(op)))
	}
	alive := 0
	for _, rid := range append([]string{c1}, children...) {
		if e.live(t, rid) {
			alive++
		}
	}
	if alive != 2 {
		t.Fatalf("%d of the resource and its children live after the crash, want 2 (resource and one child done)", alive)
	}
	before := e.lastVersion(t, c1)["properties"].(obj)["cosmosMetadata"].(obj)["instanceVersion"]
	if res := e.tick(t); res.Changed != 1 {
		t.Fatalf("the next tick = %+v, want the delete completed", res)
	}
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	for _, rid := range append([]string{c1}, children...) {
		if e.live(t, rid) {
			t.Errorf("%s still live", rid)
		}
	}
	if after := e.lastVersion(t, c1)["properties"].(obj)["cosmosMetadata"].(obj)["instanceVersion"]; after != before {
		t.Errorf("the soft-deleted cluster was written again (instanceVersion %v -> %v)", before, after)
	}
	if calls := e.sink.calls(op); len(calls) != 1 {
		t.Errorf("notifications = %d, want 1", len(calls))
	}
}

// TestNoInternalIDOnUpdateOrDelete: upstream records a CS href on an
// operation only for a break-glass credential (and RevokeCredentials,
// from the frontend); updates and deletes keep internalId "".
func TestNoInternalIDOnUpdateOrDelete(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	up := e.update(t, clusterRID("c1"), request{}, func(s *spec) { n := 30; s.cluster.NodeDrainTimeoutMinutes = &n })
	npUp := e.update(t, nodePoolRID("c1", "np1"), request{}, func(s *spec) { s.nodePool.Replicas = 4 })
	e.drive(t, up, npUp)
	e.wantOp(t, up, arm.ProvisioningStateSucceeded, "")
	e.wantOp(t, npUp, arm.ProvisioningStateSucceeded, "")
	if n := e.sim.Ledger().Count("PATCH", cs.ClustersPath+"/{id}"); n != 1 {
		t.Errorf("cluster PATCHes = %d, want 1", n)
	}
	ops := e.remove(t, clusterRID("c1"), request{})
	e.drive(t, ops...)
	for _, name := range append([]string{up, npUp}, ops...) {
		if got := e.op(t, name).Properties.InternalID; got != "" {
			t.Errorf("operation %s wrote internalId %q", name, got)
		}
	}
}

// legacyDelete writes a Delete the way a frontend from before the new
// deletion approach did: it deleted the object in CS itself, put the CS
// href in internalId and left the usesNew* flags false.
func (e *env) legacyDelete(t testing.TB, rid string) string {
	t.Helper()
	return e.legacyDeleteOp(t, rid, true)
}

// legacyDeleteOp is legacyDelete; csDelete false leaves the object alone
// in CS, as an old frontend whose CS call was lost would have.
func (e *env) legacyDeleteOp(t testing.TB, rid string, csDelete bool) string {
	t.Helper()
	res := e.resource(t, rid)
	href := res.ClusterServiceID()
	var err error
	switch {
	case !csDelete:
	case res.Kind == document.KindCluster:
		err = e.cs.DeleteCluster(context.Background(), href)
	case res.Kind == document.KindNodePool:
		err = e.cs.DeleteNodePool(context.Background(), href)
	case res.Kind == document.KindExternalAuth:
		err = e.cs.DeleteExternalAuth(context.Background(), href)
	}
	if err != nil {
		t.Fatal(err)
	}
	op, _ := e.newOp(t, document.RequestDelete, rid, href, request{})
	op.Properties.UsesNewClusterDeletionApproach = false
	op.Properties.UsesNewNodePoolDeletionApproach = false
	op.Properties.UsesNewExternalAuthDeletionApproach = false
	body, err := op.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	r := res.Clone()
	r.SetActiveOperationID(op.Name())
	r.SetProvisioningState(arm.ProvisioningStateDeleting)
	r.SetDeletionTimestamp(e.clk.Now())
	rbody, err := r.MarshalReplace()
	if err != nil {
		t.Fatal(err)
	}
	e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}, {Kind: store.OpReplace, ID: r.ID(), Body: rbody, IfMatch: r.ETag}})
	return op.Name()
}

// TestLegacyDeleteApproach: a Delete whose usesNew* flag is false is
// polled by its internalId without a second CS DELETE and without a
// deadline, and completes when CS answers 404.
func TestLegacyDeleteApproach(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.DeleteDeadline = 30 * time.Second })
	e.readyCluster(t, "c1")
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	np := e.legacyDelete(t, nodePoolRID("c1", "np1"))
	e.clk.Advance(time.Minute) // past the deadline a new-approach delete would have
	e.drive(t, np)
	e.wantOp(t, np, arm.ProvisioningStateSucceeded, "")
	if e.live(t, nodePoolRID("c1", "np1")) {
		t.Errorf("node pool document still live")
	}
	cl := e.legacyDelete(t, clusterRID("c1"))
	e.drive(t, cl)
	e.wantOp(t, cl, arm.ProvisioningStateSucceeded, "")
	if n := e.sim.Ledger().Count("DELETE", cs.ClustersPath+"/{id}"); n != 1 {
		t.Errorf("cluster DELETEs = %d, want only the old frontend's", n)
	}
	if n := e.sim.Ledger().Count("DELETE", cs.ClustersPath+"/{id}/node_pools/{np}"); n != 1 {
		t.Errorf("node pool DELETEs = %d, want only the old frontend's", n)
	}
	if !strings.Contains(e.logs.String(), "legacy deletion approach") {
		t.Errorf("no log line names the legacy path")
	}
}

// TestDeleteRaceCompletesInOneTick: a cluster's Delete and its node
// pool's implicit Delete complete in the same tick. Whichever soft-deletes
// the node pool second meets the first's write: a store that reads before
// it replaces (Cosmos) answers 412. That child is done, not a conflict,
// so both operations are Succeeded after that one tick.
func TestDeleteRaceCompletesInOneTick(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	e.readyCluster(t, "c2") // live: its list answer corroborates c1's 404 in the tick
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	ops := e.remove(t, clusterRID("c1"), request{})
	if len(ops) != 2 {
		t.Fatalf("delete made %d operations, want the cluster's and the node pool's", len(ops))
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateDeleting, "")
	}
	npID := document.CosmosID(nodePoolRID("c1", "np1"))
	raced := false
	e.store.setHook(func(ctx context.Context, p hookPhase, w write) error {
		if p != beforeWrite || w.kind != "SoftDelete" || w.ids[0] != npID || raced {
			return nil
		}
		raced = true // the other operation's soft-delete lands between this one's read and replace
		if err := e.store.Store.SoftDelete(ctx, w.pk, npID); err != nil {
			return err
		}
		return fmt.Errorf("replacing %s: %w", npID, store.ErrPreconditionFailed)
	})
	e.clk.Advance(2 * time.Minute) // CS has deleted both
	e.tick(t)
	if !raced {
		t.Fatal("the node pool document was never soft-deleted")
	}
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	}
}

// TestSoftDeleteRetriesOnceThroughWriteGuarded: a 412 is re-read and
// tried once more; gone counts as done; a second 412 is left for a later
// tick (errRetryLater), never spun on.
func TestSoftDeleteRetriesOnceThroughWriteGuarded(t *testing.T) {
	tests := []struct {
		name      string
		create    bool
		refusals  int  // SoftDeletes answered 412 before the store is asked
		goneAfter bool // the first refusal's writer deleted the document
		wantCalls int
		wantErr   error
		wantGone  bool
	}{
		{"live", true, 0, false, 1, nil, true},
		{"missing", false, 0, false, 1, nil, true},
		{"refused, then gone", true, 1, true, 1, nil, true},
		{"refused once, live", true, 1, false, 2, nil, true},
		{"refused twice", true, 2, false, 2, errRetryLater, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			const id = "doc-1"
			if tc.create {
				if _, err := e.store.Store.Create(ctx, testPK, []byte(`{"id":"`+id+`","partitionKey":"`+testPK+`"}`)); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			e.store.setHook(func(ctx context.Context, p hookPhase, w write) error {
				if p != beforeWrite || w.kind != "SoftDelete" {
					return nil
				}
				if calls++; calls > tc.refusals {
					return nil
				}
				if tc.goneAfter {
					if err := e.store.Store.SoftDelete(ctx, w.pk, id); err != nil {
						return err
					}
				}
				return fmt.Errorf("replacing %s: %w", id, store.ErrPreconditionFailed)
			})
			err := e.engine.softDelete(ctx, slog.New(slog.DiscardHandler), testPK, id)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("softDelete = %v, want %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("SoftDelete calls = %d, want %d", calls, tc.wantCalls)
			}
			_, err = e.store.Store.Get(ctx, testPK, id)
			if gone := errors.Is(err, store.ErrNotFound); gone != tc.wantGone {
				t.Errorf("document gone = %v (%v), want %v", gone, err, tc.wantGone)
			}
		})
	}
}
