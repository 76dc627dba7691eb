package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestClusterCreate: clusterCreate's decisions, one tick each: the
// dispatch the change feed missed (a POST, the ID recorded), a pending ID
// still in flight left alone, the poll's Provisioning and Succeeded, CS's
// failure and the deadline.
func TestClusterCreate(t *testing.T) {
	c1 := clusterRID("c1")
	created := func(t *testing.T, e *env) string {
		return dispatched(t, e, e.create(t, document.KindCluster, c1, request{}))
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick POSTs it and records its ID",
		before: func(t *testing.T, e *env) string {
			op := e.create(t, document.KindCluster, c1, request{})
			e.feed(t) // the change feed lost it
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted,
			calls: map[string]int{"POST " + csClusters: 1}, then: recorded("")},
	}, {
		name: "a pending ID chosen just now: left to its dispatch",
		before: func(t *testing.T, e *env) string {
			op := e.create(t, document.KindCluster, c1, request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			edit(t, e, c1, func(s obj) {
				s["pendingClusterServiceID"] = csClusters + "/0123456789abcdefghijklmnopqrstuv"
				s["pendingClusterServiceIDTime"] = e.clk.Now().UTC().Format(time.RFC3339)
			})
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted,
			calls: map[string]int{"POST " + csClusters: 0, "GET " + csClusters: 0}},
	}, {
		name: "CS installing: Provisioning",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateProvisioning, resource: arm.ProvisioningStateProvisioning,
			calls: map[string]int{"POST " + csClusters: 0}},
	}, {
		name: "CS ready: Succeeded",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			e.clk.Advance(10 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded},
	}, {
		name:   "CS failed the install: Failed, the merged message",
		before: created,
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailCluster("c1", simulator.ClusterFailure{Message: "no capacity"}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(3 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[clusterServiceClusterStatus] no capacity", resource: arm.ProvisioningStateFailed},
	}, {
		// No deadline overrides CS's word that the work is under way
		// (overdue.go): held, recorded stuck past its deadline.
		name: "past the deadline while CS installs: held, recorded stuck",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			pastDeadline(t, e, c1, "createOperationCompletionDeadline")
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, then: heldOverdue},
	}, {
		name: "past the deadline, CS unreadable: Failed, naming the work",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			pastDeadline(t, e, c1, "createOperationCompletionDeadline")
			return op
		},
		cs: csDown,
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, resource: arm.ProvisioningStateFailed,
			then: expiredAs("cluster creation")},
	}})
}
