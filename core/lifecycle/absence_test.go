package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// heldForWindow is the rule tables' expectation for a delete CS answered
// its own 404 for when no witness of its kind is live: the tick leaves it
// Deleting, its resource in place, and it completes once the confirmation
// window has passed (throughWindow), then meets then, if set. Before
// issue 43 such a 404 completed the delete in its tick.
func heldForWindow(then func(t *testing.T, e *env, op *document.OperationDocument)) after {
	return after{status: arm.ProvisioningStateDeleting, then: func(t *testing.T, e *env, op *document.OperationDocument) {
		t.Helper()
		if op.Properties.ExternalID != "" && e.resource(t, op.Properties.ExternalID) == nil && !legacyOp(op) {
			t.Errorf("the held delete's resource %s is gone already", op.Properties.ExternalID)
		}
		throughWindow(t, e, op.Name())
		if then != nil {
			then(t, e, op)
		}
	}}
}

func legacyOp(op *document.OperationDocument) bool {
	p := op.Properties
	return !p.UsesNewClusterDeletionApproach && !p.UsesNewNodePoolDeletionApproach && !p.UsesNewExternalAuthDeletionApproach
}

// throughWindow ticks a minute apart until the delete op is terminal: it
// must not be before DefaultAbsenceWindow has passed, and must be Succeeded
// within it and the pending-ID grace and two ticks more.
func throughWindow(t *testing.T, e *env, name string) {
	t.Helper()
	start := e.clk.Now()
	for e.clk.Now().Sub(start) <= DefaultAbsenceWindow+DefaultPendingIDGrace+2*time.Minute {
		e.clk.Advance(time.Minute)
		if _, err := e.deliver(t); err != nil {
			t.Logf("dispatch: %v", err)
		}
		e.tick(t)
		if e.op(t, name).Properties.Status.IsTerminal() {
			break
		}
	}
	if waited := e.clk.Now().Sub(start); waited < DefaultAbsenceWindow-time.Minute {
		t.Errorf("the delete completed %s after its first 404, within the confirmation window (%s)", waited, DefaultAbsenceWindow)
	}
	e.wantOp(t, name, arm.ProvisioningStateSucceeded, "")
	if rid := e.op(t, name).Properties.ExternalID; e.live(t, rid) {
		t.Errorf("%s still live after its delete succeeded", rid)
	}
}

// TestDeletedWitnessIsNoAlarm: the store's witnesses are cached for a few
// minutes; one deleted since is checked against the store before it is
// read, so CS's (right) 404 for it is not taken for CS answering wrong.
// Without the check the last delete here met a cs.anomaly wave and waited.
func TestDeletedWitnessIsNoAlarm(t *testing.T) {
	e := newEnv(t)
	for _, c := range []string{"w1", "d1", "d2"} {
		e.readyCluster(t, c)
	}
	gone := func(name string) {
		t.Helper()
		del := e.remove(t, clusterRID(name), request{})[0]
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(2 * time.Minute) // CS has removed it
		e.tick(t)
		e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
	}
	gone("d1") // witnesses w1 and d2, cached
	gone("w1") // witness d2
	del := e.remove(t, clusterRID("d2"), request{})[0]
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(30 * time.Second) // w1, cached still, is gone from the store and CS
	throughWindow(t, e, del)        // no live witness left: the window
	if recs := e.anomalies(); len(recs) != 0 {
		t.Errorf("cs.anomaly records = %v, want none: the deleted witness is no evidence either way", recs)
	}
}

// A window shorter than the gap between a delete's reads (a tick's, or a
// backoff's) still confirms after its reads: a run is forgotten only when
// it has not been read for the longer of two windows and two backoffs.
func TestShortWindowSpansSparseReads(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AbsenceWindow = time.Millisecond })
	h := held404{j: &job{op: &document.OperationDocument{ID: "op", PartitionKey: testPK}}, href: "/api/aro_hcp/v1alpha1/clusters/x"}
	var v absenceVerdict
	for i := range absenceReads {
		e.engine.window([]held404{h}, &v)
		if i < absenceReads-1 {
			e.clk.Advance(time.Minute) // a tick's gap, far longer than the window
		}
	}
	if len(v.confirmed) != 1 {
		t.Fatalf("after %d reads a minute apart with a 1 ms window: %d confirmed, %d waiting; want it confirmed",
			absenceReads, len(v.confirmed), len(v.waiting))
	}
}
