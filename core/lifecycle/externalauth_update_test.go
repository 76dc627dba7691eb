package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestExternalAuthUpdate: the external auth update's decisions, one tick each:
// the PATCH and the Updating marker, done once CS carries the issuer,
// Failed under InternalServerError when CS says it is in error, and no
// deadline: a CS that cannot be read for days leaves it Updating.
func TestExternalAuthUpdate(t *testing.T) {
	audiences := func(s *spec) { s.externalAuth.Audiences = []string{"app-1", "app-2"} }
	updated := func(t *testing.T, e *env) string {
		readyChild(t, e, document.KindExternalAuth, ea1())
		return dispatched(t, e, e.update(t, ea1(), request{}, audiences))
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick PATCHes it and marks it Updating",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindExternalAuth, ea1())
			op := e.update(t, ea1(), request{}, audiences)
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating,
			calls: map[string]int{"PATCH " + csExternalAuth: 1}},
	}, {
		name:   "CS carries the issuer: Succeeded",
		before: updated,
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"PATCH " + csExternalAuth: 0}},
	}, {
		name:   "CS says it is in error: Failed under InternalServerError",
		before: updated,
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailExternalAuth("c1", "ea1", simulator.ExternalAuthFailure{Message: "no keys"}); err != nil {
				t.Fatal(err)
			}
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[clusterServiceExternalAuthStatus] no keys", resource: arm.ProvisioningStateFailed},
	}, {
		name:   "no deadline: CS unreadable for two days, still Updating",
		before: updated,
		cs: func(t *testing.T, e *env) {
			if err := e.sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: 503}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(48 * time.Hour)
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating},
	}})
}
