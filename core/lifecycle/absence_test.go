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
