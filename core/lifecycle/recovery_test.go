package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestClusterServiceFailuresRecover: CS 5xx and 429 answers are retried
// by the client; longer outages fail the step, which a later delivery or
// tick repeats, without ever creating a second object.
func TestClusterServiceFailuresRecover(t *testing.T) {
	t.Run("503 and 429 retried by the client", func(t *testing.T) {
		e := newEnv(t)
		e.readyCluster(t, "c0")
		op := e.create(t, document.KindNodePool, nodePoolRID("c0", "np1"), request{})
		cl := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		if err := e.sim.FailNext(2, http.StatusServiceUnavailable); err != nil {
			t.Fatal(err)
		}
		res, err := e.deliver(t)
		if err != nil || res.Dispatched != 2 {
			t.Fatalf("dispatch = %+v, %v; want both dispatched despite two 503s", res, err)
		}
		if err := e.sim.FailNext(2, http.StatusTooManyRequests); err != nil {
			t.Fatal(err)
		}
		e.drive(t, op, cl)
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		e.wantOp(t, cl, arm.ProvisioningStateSucceeded, "")
		l := e.sim.Ledger()
		faults := 0
		for _, n := range l.Faults {
			faults += n
		}
		if faults != 4 {
			t.Errorf("simulator injected %d faults, want 4", faults)
		}
		if e.csPosts(nodePoolsPOST) != 1 || e.csPosts(clustersPOST) != 2 {
			t.Errorf("POSTs: node pools %d, clusters %d; want 1 and 2", e.csPosts(nodePoolsPOST), e.csPosts(clustersPOST))
		}
	})
	t.Run("outage longer than the client's retries", func(t *testing.T) {
		e := newEnv(t)
		op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		if err := e.sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: http.StatusInternalServerError}); err != nil {
			t.Fatal(err)
		}
		docs := e.feed(t)
		if _, err := e.engine.DispatchDocuments(context.Background(), docs); err == nil || !strings.Contains(err.Error(), "500") {
			t.Fatalf("dispatch during the outage: err = %v, want the CS 500", err)
		}
		// The host redelivers the batch at once: the pending ID is fresh, so
		// it is left to the tick rather than raced.
		res, err := e.engine.DispatchDocuments(context.Background(), docs)
		if err != nil || res.Deferred != 1 {
			t.Fatalf("redelivery = %+v, %v; want the operation deferred", res, err)
		}
		e.clk.Advance(2 * time.Minute)
		if tr := e.tick(t); tr.Errors != 1 || tr.Changed != 0 {
			t.Fatalf("tick during the outage = %+v, want one error and no write", tr)
		}
		if err := e.sim.SetFaults(simulator.Faults{}); err != nil {
			t.Fatal(err)
		}
		e.drive(t, op)
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		if got := e.csPosts(clustersPOST); got != 1 {
			t.Errorf("cluster POSTs = %d, want 1", got)
		}
	})
}

// bumpOnce returns a hook that rewrites the document with Cosmos id
// target just before the first write whose body contains marker, so that
// write fails with 412; bumped counts how often it fired.
func bumpOnce(e *env, target, marker string, bumped *atomic.Int32) func(context.Context, hookPhase, write) error {
	return func(ctx context.Context, phase hookPhase, w write) error {
		if phase != beforeWrite || !w.contains(marker) || !bumped.CompareAndSwap(0, 1) {
			return nil
		}
		item, err := e.store.Store.Get(ctx, testPK, target)
		if err != nil {
			return err
		}
		_, err = e.store.Store.Replace(ctx, testPK, target, item.Body, item.ETag)
		return err
	}
}

func TestETagConflictsAreRetried(t *testing.T) {
	t.Run("operation changed before the status batch", func(t *testing.T) {
		e := newEnv(t)
		op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(2 * time.Minute) // installing: Provisioning is due
		var bumped atomic.Int32
		opID := document.CosmosID(document.OperationResourceID(testSub, op))
		e.store.setHook(bumpOnce(e, opID, `"Provisioning"`, &bumped))
		if tr := e.tick(t); tr.Changed != 1 || tr.Errors != 0 {
			t.Fatalf("tick = %+v, want the write to succeed after one re-read", tr)
		}
		if bumped.Load() != 1 {
			t.Fatalf("the conflict was never provoked")
		}
		e.wantOp(t, op, arm.ProvisioningStateProvisioning, "")
		if got := e.resource(t, clusterRID("c1")).ProvisioningState(); got != arm.ProvisioningStateProvisioning {
			t.Errorf("cluster state = %s, want Provisioning", got)
		}
	})
	t.Run("resource changed before the pending ID write", func(t *testing.T) {
		e := newEnv(t)
		op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		var bumped atomic.Int32
		e.store.setHook(bumpOnce(e, document.CosmosID(clusterRID("c1")), "pendingClusterServiceID", &bumped))
		res, err := e.deliver(t)
		if err != nil || res.Dispatched != 1 || bumped.Load() != 1 {
			t.Fatalf("dispatch = %+v, %v (bumped %d); want it dispatched after one re-read", res, err, bumped.Load())
		}
		e.drive(t, op)
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		if got := e.csPosts(clustersPOST); got != 1 {
			t.Errorf("cluster POSTs = %d, want 1", got)
		}
	})
	t.Run("two conflicts leave it for the next tick", func(t *testing.T) {
		e := newEnv(t)
		op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(2 * time.Minute)
		opID := document.CosmosID(document.OperationResourceID(testSub, op))
		var first, second atomic.Int32
		hookA, hookB := bumpOnce(e, opID, `"Provisioning"`, &first), bumpOnce(e, opID, `"Provisioning"`, &second)
		e.store.setHook(func(ctx context.Context, p hookPhase, w write) error {
			if first.Load() == 0 {
				return hookA(ctx, p, w)
			}
			return hookB(ctx, p, w)
		})
		if tr := e.tick(t); tr.Changed != 0 || tr.Errors != 1 {
			t.Fatalf("tick = %+v, want no write and one error", tr)
		}
		e.store.setHook(nil)
		if tr := e.tick(t); tr.Changed != 1 {
			t.Fatalf("next tick = %+v, want the write", tr)
		}
		e.wantOp(t, op, arm.ProvisioningStateProvisioning, "")
	})
}

func TestNotificationRetriedWithBackoff(t *testing.T) {
	e := newEnv(t) // backoff 10 s doubling, capped at 1 min
	e.readyCluster(t, "c0")
	e.sink.failNext(2)
	// External auths settle at once: the first tick finishes it.
	op := e.create(t, document.KindExternalAuth, externalAuthRID("c0", "ea"), request{notify: true})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		advance  time.Duration
		calls    int
		notified int
	}{
		{0, 1, 0},                // Succeeded, first POST fails: next in 10 s
		{5 * time.Second, 1, 0},  // not due
		{5 * time.Second, 2, 0},  // second POST fails: next in 20 s
		{15 * time.Second, 2, 0}, // not due
		{5 * time.Second, 3, 1},  // delivered
		{time.Minute, 3, 0},      // nothing left to do
	}
	for i, s := range steps {
		e.clk.Advance(s.advance)
		tr := e.tick(t)
		if got := len(e.sink.calls(op)); got != s.calls || tr.Notified != s.notified {
			t.Fatalf("step %d: %d POSTs, notified %d; want %d, %d", i, got, tr.Notified, s.calls, s.notified)
		}
	}
	calls := e.sink.calls(op)
	ok := 0
	for _, c := range calls {
		if c.Status == http.StatusOK {
			ok++
			if c.Body.Status != arm.ProvisioningStateSucceeded || c.Body.Name != op {
				t.Errorf("delivered body = %+v", c.Body)
			}
		}
	}
	if ok != 1 {
		t.Errorf("%d successful notifications, want exactly 1", ok)
	}
	if uri := e.op(t, op).Properties.NotificationURI; uri != "" {
		t.Errorf("notificationUri = %q, want it cleared", uri)
	}
	if e.engine.notifyAt.size() != 0 {
		t.Errorf("retry schedule keeps %d entries, want none", e.engine.notifyAt.size())
	}
}

func TestRefusedNotificationURIIsDropped(t *testing.T) {
	e := newEnv(t)
	op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	doc := e.op(t, op)
	doc.Properties.NotificationURI = "https://attacker.example.com/steal"
	body, err := doc.MarshalReplace()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Store.Replace(context.Background(), testPK, doc.ID, body, doc.ETag); err != nil {
		t.Fatal(err)
	}
	e.drive(t, op)
	got := e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	if got.Properties.NotificationURI != "" {
		t.Errorf("notificationUri = %q, want it dropped", got.Properties.NotificationURI)
	}
	if !strings.Contains(e.logs.String(), "level=WARN msg=notification.attempt") || !strings.Contains(e.logs.String(), "outcome=refused") {
		t.Errorf("no warning logged for the refused URI")
	}
}

// TestInterruptedStepsConverge cuts dispatch and delete completion short
// between their steps; running again finishes the job without duplicates.
func TestInterruptedStepsConverge(t *testing.T) {
	errCrash := errors.New("simulated crash")
	t.Run("canceled after the pending cluster ID", func(t *testing.T) {
		e := newEnv(t)
		op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		ctx, cancel := context.WithCancel(context.Background())
		e.store.setHook(func(_ context.Context, p hookPhase, w write) error {
			if p == afterWrite && w.contains("pendingClusterServiceID") {
				cancel()
			}
			return nil
		})
		if _, err := e.engine.DispatchDocuments(ctx, e.feed(t)); !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted dispatch: err = %v, want context.Canceled", err)
		}
		e.store.setHook(nil)
		if r := e.resource(t, clusterRID("c1")); r.PendingClusterServiceID() == "" || r.ClusterServiceID() != "" || e.csPosts(clustersPOST) != 0 {
			t.Fatalf("after the interruption: pending %q, id %q, POSTs %d", r.PendingClusterServiceID(), r.ClusterServiceID(), e.csPosts(clustersPOST))
		}
		e.drive(t, op)
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		if got := e.csPosts(clustersPOST); got != 1 {
			t.Errorf("cluster POSTs = %d, want 1", got)
		}
	})
	t.Run("crash between the POST and recording its ID", func(t *testing.T) {
		e := newEnv(t)
		op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		var crashed atomic.Int32
		e.store.setHook(func(_ context.Context, p hookPhase, w write) error {
			if p == beforeWrite && w.contains(`"clusterServiceID"`) && crashed.CompareAndSwap(0, 1) {
				return errCrash
			}
			return nil
		})
		if _, err := e.deliver(t); !errors.Is(err, errCrash) {
			t.Fatalf("dispatch: err = %v, want the crash", err)
		}
		e.drive(t, op) // the tick adopts the cluster the first attempt created
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		if got := e.csPosts(clustersPOST); got != 1 {
			t.Errorf("cluster POSTs = %d, want 1", got)
		}
		if !strings.Contains(e.logs.String(), "adopting existing cluster") {
			t.Errorf("the existing cluster was not adopted")
		}
	})
	t.Run("crash in the middle of delete completion", func(t *testing.T) {
		e := newEnv(t)
		e.readyCluster(t, "c1")
		e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
		ops := e.remove(t, clusterRID("c1"), request{})
		clusterID := document.CosmosID(clusterRID("c1"))
		var crashes atomic.Int32
		e.store.setHook(func(_ context.Context, p hookPhase, w write) error {
			if p == beforeWrite && w.kind == "SoftDelete" && w.ids[0] == clusterID && crashes.Add(1) <= 2 {
				return errCrash
			}
			return nil
		})
		e.drive(t, ops...)
		if crashes.Load() < 3 {
			t.Fatalf("the cluster's soft delete was attempted %d times, want the crashes and a success", crashes.Load())
		}
		for _, op := range ops {
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		}
		if e.resource(t, clusterRID("c1")) != nil || e.resource(t, nodePoolRID("c1", "np1")) != nil {
			t.Errorf("documents left behind")
		}
	})
	t.Run("tick canceled midway", func(t *testing.T) {
		e := newEnv(t)
		var ops []string
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			ops = append(ops, e.create(t, document.KindCluster, clusterRID(n), request{}))
		}
		e.clk.Advance(2 * time.Minute) // past the grace: the tick dispatches
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int32
		e.store.setHook(func(_ context.Context, p hookPhase, _ write) error {
			if p == afterWrite && n.Add(1) == 3 {
				cancel()
			}
			return nil
		})
		if _, err := e.engine.Tick(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Tick: err = %v, want context.Canceled", err)
		}
		e.store.setHook(nil)
		e.drive(t, ops...)
		for _, op := range ops {
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		}
		// The cancel may cut a POST after the simulator counted it but
		// before it created anything (under load it did: 7 POSTs, 6
		// clusters), so what must hold is one cluster per operation.
		clusters, err := e.cs.ListClusters(context.Background(), "")
		if err != nil || len(clusters) != len(ops) {
			t.Errorf("CS has %d clusters (%v) after %d POSTs, want %d", len(clusters), err, e.csPosts(clustersPOST), len(ops))
		}
		seen := map[string]bool{}
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			id := e.resource(t, clusterRID(n)).ClusterServiceID()
			if id == "" || seen[id] {
				t.Errorf("cluster %s has CS ID %q, want its own", n, id)
			}
			seen[id] = true
		}
	})
}

// TestUnchangedTickWritesNothing: when CS reports what the documents
// already say, a tick reads but never writes.
func TestUnchangedTickWritesNothing(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c0")
	e.drive(t, e.requestCredential(t, "c0", request{}))
	e.sink.failNext(1000)
	slow := testDurations()
	for _, d := range []*time.Duration{&slow.ClusterValidating, &slow.NodePoolValidating, &slow.CredentialIssuing, &slow.CredentialRevoking} {
		*d = time.Hour
	}
	e.sim.SetDurations(slow)
	ops := []string{
		e.create(t, document.KindCluster, clusterRID("c1"), request{}),
		e.create(t, document.KindNodePool, nodePoolRID("c0", "np1"), request{}),
		e.revokeCredentials(t, "c0", request{}),
		e.update(t, clusterRID("c0"), request{notify: true}, func(s *spec) {
			s.cluster.NodeDrainTimeoutMinutes = new(30)
		}),
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(90 * time.Second)
	for range 3 { // settle: states move and the update finishes (its notification fails)
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	e.tick(t)
	before, requests := e.store.writes.Load(), e.sim.Ledger().Total()
	tr := e.tick(t)
	if got := e.store.writes.Load() - before; got != 0 || tr.Changed != 0 {
		t.Errorf("unchanged tick wrote %d documents (result %+v), want none", got, tr)
	}
	if tr.Polled < len(ops) || e.sim.Ledger().Total() == requests {
		t.Errorf("tick = %+v after %d CS requests; want every operation polled", tr, e.sim.Ledger().Total()-requests)
	}
}
