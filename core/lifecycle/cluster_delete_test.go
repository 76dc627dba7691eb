package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestClusterDelete: clusterDelete's decisions, one tick each: the DELETE
// and the stamp, Deleting while CS uninstalls, CS's 404 completing it with
// its children, the legacy path waiting for the children's documents, the
// deadline checked before the cluster is asked.
func TestClusterDelete(t *testing.T) {
	c1 := clusterRID("c1")
	removed := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		return dispatched(t, e, e.remove(t, c1, request{})[0])
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick DELETEs it and stamps the resource",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.remove(t, c1, request{})[0]
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting,
			calls: map[string]int{"DELETE " + csCluster: 1}, then: stamped},
	}, {
		name:   "CS uninstalling: Deleting",
		before: removed,
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting,
			calls: map[string]int{"DELETE " + csCluster: 0}},
	}, {
		name: "CS answers 404, no other cluster: Succeeded once the window passed, the cluster and its node pool gone",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := dispatched(t, e, e.remove(t, c1, request{})[0])
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: heldForWindow(func(t *testing.T, e *env, _ *document.OperationDocument) {
			if np := e.resource(t, np1()); np != nil {
				t.Errorf("node pool document left behind: %s", np.ProvisioningState())
			}
		}),
	}, {
		name: "legacy: CS answers 404, a node pool document remains: Deleting",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := e.legacyDeleteOp(t, c1, true)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting},
	}, {
		// No deadline overrides CS's word that the work is under way
		// (overdue.go): CS is asked, and its uninstalling holds it.
		name: "past the deadline while CS uninstalls: held, recorded stuck",
		before: func(t *testing.T, e *env) string {
			op := removed(t, e)
			pastDeadline(t, e, c1, "deleteOperationCompletionDeadline")
			return op
		},
		want: after{status: arm.ProvisioningStateDeleting, then: heldOverdue},
	}, {
		name: "past the deadline, CS unreadable: Failed",
		before: func(t *testing.T, e *env) string {
			op := removed(t, e)
			pastDeadline(t, e, c1, "deleteOperationCompletionDeadline")
			return op
		},
		cs: csDown,
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, resource: arm.ProvisioningStateFailed,
			calls: map[string]int{"DELETE " + csCluster: 0}, then: expiredAs("cluster deletion")},
	}})
}
