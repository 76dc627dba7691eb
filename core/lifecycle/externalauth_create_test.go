package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestExternalAuthCreate: the external auth create's decisions, one tick each:
// the POST under its cluster with the ID recorded, done once the object
// exists, Failed when CS says it is in error, the deadline while its
// cluster is not in CS.
func TestExternalAuthCreate(t *testing.T) {
	created := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		return dispatched(t, e, e.create(t, document.KindExternalAuth, ea1(), request{}))
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick POSTs it under its cluster and records its ID",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.create(t, document.KindExternalAuth, ea1(), request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted,
			calls: map[string]int{"POST " + csExternalAuths: 1}, then: recorded("/external_auths/ea1")},
	}, {
		name:   "the object exists: Succeeded",
		before: created,
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"POST " + csExternalAuths: 0}},
	}, {
		name:   "CS says it is in error: Failed, the merged message",
		before: created,
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailExternalAuth("c1", "ea1", simulator.ExternalAuthFailure{Message: "no keys"}); err != nil {
				t.Fatal(err)
			}
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[externalAuthClusterServiceCreate] no keys", resource: arm.ProvisioningStateFailed},
	}, {
		name: "past the deadline, its cluster not in CS: Failed, naming the work",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			notInCS(t, e)
			op := e.create(t, document.KindExternalAuth, ea1(), request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			pastDeadline(t, e, ea1(), "createOperationCompletionDeadline")
			return op
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, resource: arm.ProvisioningStateFailed,
			noCS: true, then: expiredAs("external auth creation")},
	}})
}
