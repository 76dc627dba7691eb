package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestClusterUpdate: the cluster update's decisions, one tick each: the PATCH
// and the Updating marker, done only once CS carries the fields, a
// cluster CS never had, CS's failure under InternalServerError (CS's fault, not the caller's).
func TestClusterUpdate(t *testing.T) {
	c1 := clusterRID("c1")
	drain := func(s *spec) { s.cluster.NodeDrainTimeoutMinutes = new(30) }
	updated := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		return dispatched(t, e, e.update(t, c1, request{}, drain))
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick PATCHes it and marks it Updating",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.update(t, c1, request{}, drain)
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating,
			calls: map[string]int{"PATCH " + csCluster: 1}},
	}, {
		name: "CS carries the change: Succeeded",
		before: func(t *testing.T, e *env) string {
			op := updated(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"PATCH " + csCluster: 0}},
	}, {
		name:   "CS ready without the change: still Updating",
		before: updated,
		cs: func(t *testing.T, e *env) { // someone put it back behind the RP's back
			fifteen := 15
			if _, err := e.cs.PatchCluster(context.Background(), e.resource(t, c1).ClusterServiceID(),
				cs.ClusterPatch{NodeDrainGracePeriodMinutes: &fifteen}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating},
	}, {
		name: "a cluster CS never had: Failed at once",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.update(t, c1, request{}, drain)
			e.feed(t)
			notInCS(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "The cluster was never created, so it cannot be updated.", resource: arm.ProvisioningStateFailed, noCS: true},
	}, {
		name:   "CS failed the update: Failed under InternalServerError",
		before: updated,
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailCluster("c1", simulator.ClusterFailure{Message: "update failed"}); err != nil {
				t.Fatal(err)
			}
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, resource: arm.ProvisioningStateFailed,
			then: func(t *testing.T, _ *env, op *document.OperationDocument) {
				if m := op.Properties.Error.Message; !strings.Contains(m, "[clusterServiceClusterStatus] update failed") {
					t.Errorf("error message = %q, want the cluster status source's", m)
				}
			}},
	}})
}
