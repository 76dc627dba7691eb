package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestExternalAuthDelete: the external auth delete's decisions, one tick each:
// the DELETE and the stamp, Deleting while CS uninstalls, CS's 404
// completing it, the deadline.
func TestExternalAuthDelete(t *testing.T) {
	removed := func(t *testing.T, e *env) string {
		readyChild(t, e, document.KindExternalAuth, ea1())
		return dispatched(t, e, e.remove(t, ea1(), request{})[0])
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick DELETEs it and stamps the resource",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindExternalAuth, ea1())
			op := e.remove(t, ea1(), request{})[0]
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting,
			calls: map[string]int{"DELETE " + csExternalAuth: 1}, then: stamped},
	}, {
		name:   "CS uninstalling: Deleting",
		before: removed,
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting,
			calls: map[string]int{"DELETE " + csExternalAuth: 0}},
	}, {
		name: "CS answers 404, no sibling: Succeeded once the window passed, the document gone",
		before: func(t *testing.T, e *env) string {
			op := removed(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: heldForWindow(nil),
	}, {
		// No deadline overrides CS's word that the work is under way
		// (overdue.go): CS is asked, and its uninstalling holds it.
		name: "past the deadline while CS uninstalls: held, recorded stuck",
		before: func(t *testing.T, e *env) string {
			op := removed(t, e)
			pastDeadline(t, e, ea1(), "deleteOperationCompletionDeadline")
			return op
		},
		want: after{status: arm.ProvisioningStateDeleting, then: heldOverdue},
	}, {
		name: "past the deadline, CS unreadable: Failed",
		before: func(t *testing.T, e *env) string {
			op := removed(t, e)
			pastDeadline(t, e, ea1(), "deleteOperationCompletionDeadline")
			return op
		},
		cs: csDown,
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, resource: arm.ProvisioningStateFailed,
			calls: map[string]int{"DELETE " + csExternalAuth: 0}, then: expiredAs("external auth deletion")},
	}})
}
