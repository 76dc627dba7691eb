package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestNodePoolUpdate: the node pool update's decisions, one tick each: the
// PATCH and the Updating marker, done only once CS carries the replicas
// and labels, values CS would refuse, a node pool CS never had, CS's
// failure under InternalServerError.
func TestNodePoolUpdate(t *testing.T) {
	scale := func(s *spec) { s.nodePool.Replicas = 5 }
	updated := func(change func(*spec)) func(t *testing.T, e *env) string {
		return func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			return dispatched(t, e, e.update(t, np1(), request{}, change))
		}
	}
	notDispatched := func(change func(*spec)) func(t *testing.T, e *env) string {
		return func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := e.update(t, np1(), request{}, change)
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		}
	}
	runRules(t, []rule{{
		name:   "not dispatched: the tick PATCHes it and marks it Updating",
		before: notDispatched(scale),
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating,
			calls: map[string]int{"PATCH " + csNodePool: 1}},
	}, {
		name: "CS scaled it: Succeeded",
		before: func(t *testing.T, e *env) string {
			op := updated(scale)(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"PATCH " + csNodePool: 0}},
	}, {
		name:   "CS ready without the labels: still Updating",
		before: updated(func(s *spec) { s.nodePool.Labels = map[string]string{"team": "red"} }),
		cs: func(t *testing.T, e *env) { // someone put them back behind the RP's back
			if _, err := e.cs.PatchNodePool(context.Background(), e.resource(t, np1()).ClusterServiceID(),
				cs.NodePoolPatch{Labels: map[string]string{"team": "blue"}}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating},
	}, {
		name:   "negative replicas: refused before CS is asked",
		before: notDispatched(func(s *spec) { s.nodePool.Replicas = -1 }),
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInvalidRequestContent, target: "properties.replicas",
			resource: arm.ProvisioningStateFailed, calls: map[string]int{"PATCH " + csNodePool: 0, "GET " + csNodePool: 0}},
	}, {
		// CS's 404 alone is no proof (TestChildNeverCreatedOnOne404): np2,
		// live beside it, is the witness a list returns without it.
		name: "a node pool CS never had: Failed once a list shows np2 and not it",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, nodePoolRID("c1", "np2"))
			op := notDispatched(scale)(t, e)
			href := e.resource(t, np1()).ClusterServiceID()
			edit(t, e, np1(), func(s obj) { delete(s, "clusterServiceID") })
			if err := e.cs.DeleteNodePool(context.Background(), href); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute) // CS has none now
			return op
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "The node pool was never created, so it cannot be updated.", resource: arm.ProvisioningStateFailed,
			calls: map[string]int{"PATCH " + csNodePool: 0}},
	}, {
		// Its create's POST landed after the create stopped waiting (or was
		// superseded): CS's object is the resource's, recorded and updated.
		name: "a node pool CS has but its resource does not record: recorded and updated",
		before: func(t *testing.T, e *env) string {
			op := notDispatched(scale)(t, e)
			edit(t, e, np1(), func(s obj) { delete(s, "clusterServiceID") })
			return op
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating,
			calls: map[string]int{"PATCH " + csNodePool: 1}},
	}, {
		name:   "CS failed the update: Failed under InternalServerError, the merged message",
		before: updated(scale),
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailNodePool("c1", "np1", simulator.NodePoolFailure{Message: "scaling failed"}); err != nil {
				t.Fatal(err)
			}
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[clusterServiceNodePoolStatus] scaling failed", resource: arm.ProvisioningStateFailed},
	}})
}
