package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestNodePoolCreate: the node pool create's decisions, one tick each: waiting
// for its cluster to be in CS, the POST under it with the ID recorded,
// the poll's Provisioning and Succeeded, CS's failure and the deadline.
func TestNodePoolCreate(t *testing.T) {
	created := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		return dispatched(t, e, e.create(t, document.KindNodePool, np1(), request{}))
	}
	runRules(t, []rule{{
		name: "cluster not in CS: left for a later tick",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			notInCS(t, e)
			op := e.create(t, document.KindNodePool, np1(), request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted, noCS: true},
	}, {
		name: "not dispatched: the tick POSTs it under its cluster and records its ID",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.create(t, document.KindNodePool, np1(), request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted,
			calls: map[string]int{"POST " + csNodePools: 1}, then: recorded("/node_pools/np1")},
	}, {
		name: "CS installing: Provisioning",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateProvisioning, resource: arm.ProvisioningStateProvisioning,
			calls: map[string]int{"POST " + csNodePools: 0}},
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
			if _, err := e.sim.FailNodePool("c1", "np1", simulator.NodePoolFailure{Message: "VM size not available"}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[clusterServiceNodePoolStatus] VM size not available", resource: arm.ProvisioningStateFailed},
	}, {
		name: "past the deadline while CS installs: held, recorded stuck",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			pastDeadline(t, e, np1(), "createOperationCompletionDeadline")
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, then: heldOverdue},
	}, {
		name: "past the deadline, CS unreadable: Failed, naming the work",
		before: func(t *testing.T, e *env) string {
			op := created(t, e)
			pastDeadline(t, e, np1(), "createOperationCompletionDeadline")
			return op
		},
		cs: csDown,
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, resource: arm.ProvisioningStateFailed,
			then: expiredAs("node pool creation")},
	}})
}
