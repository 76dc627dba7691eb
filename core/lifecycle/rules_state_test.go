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

// The rules about what a poll or a dispatch decides, in the tables of
// rules_test.go.

// statuslessAuths is CS as it often answers for external auths: the
// object without a status.
type statuslessAuths struct{ cs.Client }

func (c statuslessAuths) GetExternalAuth(ctx context.Context, href string) (cs.ExternalAuth, error) {
	ea, err := c.Client.GetExternalAuth(ctx, href)
	ea.Status = cs.ExternalAuthStatus{}
	return ea, err
}

func (c statuslessAuths) ListExternalAuthsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]cs.ExternalAuth, error) {
	m, err := c.Client.ListExternalAuthsByHref(ctx, clusterHref, hrefs)
	for h, ea := range m {
		ea.Status = cs.ExternalAuthStatus{}
		m[h] = ea
	}
	return m, err
}

// TestRuleExternalAuthExists: an external auth CS has is created, as
// upstream's create controller decides; a state CS does report still
// counts when it is "error".
func TestRuleExternalAuthExists(t *testing.T) {
	createdAuth := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		return dispatched(t, e, e.create(t, document.KindExternalAuth, ea1(), request{}))
	}
	runRules(t, []rule{{
		name: "CS has it, without a status",
		before: func(t *testing.T, e *env) string {
			e.engine = e.engineWith(t, statuslessAuths{e.cs})
			return createdAuth(t, e)
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded},
	}, {
		name:   "CS says it is in error",
		before: createdAuth,
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailExternalAuth("c1", "ea1", simulator.ExternalAuthFailure{Message: "issuer unreachable"}); err != nil {
				t.Fatal(err)
			}
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[externalAuthClusterServiceCreate] issuer unreachable", resource: arm.ProvisioningStateFailed},
	}})
}

// engineWith is another engine on the same store over client.
func (e *env) engineWith(t *testing.T, client cs.Client) *Engine {
	t.Helper()
	eng, err := New(Deps{Store: e.store, ClusterService: client, Calls: e.calls, Notifier: nopNotifier{}, Clock: e.clk}, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestRuleStatesFromSources: each operation's state is the worst of its
// sources; a failure carries the merged, source-prefixed message for
// creates and updates (with CS's own code when it gave one) and the
// source's own message for deletes, as upstream writes them.
func TestRuleStatesFromSources(t *testing.T) {
	failNodePool := func(msg string) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) {
			if _, err := e.sim.FailNodePool("c1", "np1", simulator.NodePoolFailure{Message: msg}); err != nil {
				t.Fatal(err)
			}
		}
	}
	runRules(t, []rule{{
		name: "node pool create, CS error",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			return dispatched(t, e, e.create(t, document.KindNodePool, np1(), request{}))
		},
		cs: func(t *testing.T, e *env) {
			failNodePool("node pool creation failed")(t, e)
			e.clk.Advance(2 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[clusterServiceNodePoolStatus] node pool creation failed", resource: arm.ProvisioningStateFailed},
	}, {
		name: "cluster create, CS error with its own code",
		before: func(t *testing.T, e *env) string {
			return dispatched(t, e, e.create(t, document.KindCluster, clusterRID("c1"), request{}))
		},
		cs: func(t *testing.T, e *env) {
			if _, err := e.sim.FailCluster("c1", simulator.ClusterFailure{Code: "OCM3055", Message: "The subnet is already in use"}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(3 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateFailed, code: "OCM3055",
			message: "[clusterServiceClusterStatus] The subnet is already in use", resource: arm.ProvisioningStateFailed},
	}, {
		name: "node pool update, CS ready without the replicas",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			return dispatched(t, e, e.update(t, np1(), request{}, func(s *spec) { s.nodePool.Replicas = 4 }))
		},
		cs: func(t *testing.T, e *env) { // someone put it back behind the RP's back
			two := 2
			if _, err := e.cs.PatchNodePool(context.Background(), e.resource(t, np1()).ClusterServiceID(), cs.NodePoolPatch{Replicas: &two}); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute)
		},
		want: after{status: arm.ProvisioningStateUpdating, resource: arm.ProvisioningStateUpdating},
	}, {
		name: "node pool update, CS error",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			return dispatched(t, e, e.update(t, np1(), request{}, func(s *spec) { s.nodePool.Replicas = 4 }))
		},
		cs: failNodePool("scaling failed"),
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "[clusterServiceNodePoolStatus] scaling failed", resource: arm.ProvisioningStateFailed},
	}, {
		name: "node pool delete, CS error",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			failNodePool("deprovision failed")(t, e)
			return stampedDelete(t, e, np1())
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError,
			message: "deprovision failed", resource: arm.ProvisioningStateFailed},
	}})
}

// TestRuleClientErrors: a dispatch that CS refuses as a request, or that
// hcpops's own validation refuses, fails at once with an error naming the
// field and value; a CS that is only unwell keeps the operation waiting.
func TestRuleClientErrors(t *testing.T) {
	runRules(t, []rule{{
		name: "node pool create, negative replicas",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			s := defaultSpec(np1())
			s.nodePool.Replicas = -3
			return e.put(t, document.KindNodePool, np1(), request{}, s)
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInvalidRequestContent, target: "properties.replicas",
			message: "The node pool's properties.replicas is -3; it must not be negative.", resource: arm.ProvisioningStateFailed, noCS: true},
	}, {
		name: "external auth create, CS refuses the issuer",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			s := defaultSpec(ea1())
			s.externalAuth.IssuerURL = "http://issuer.example.com"
			return e.put(t, document.KindExternalAuth, ea1(), request{}, s)
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInvalidRequestContent,
			message: "Clusters Service refused to create the external auth: Attribute 'issuer.url' must be an https URL, " +
				"got 'http://issuer.example.com' (CLUSTERS-MGMT-400)", resource: arm.ProvisioningStateFailed},
	}, {
		name: "cluster update, negative node drain timeout",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.update(t, clusterRID("c1"), request{}, func(s *spec) { s.cluster.NodeDrainTimeoutMinutes = new(-1) })
			e.clk.Advance(2 * time.Minute) // past the dispatch grace
			return op
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInvalidRequestContent, target: "properties.nodeDrainTimeoutMinutes",
			resource: arm.ProvisioningStateFailed, noCS: true},
	}, {
		name: "node pool create, CS unavailable",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			return e.create(t, document.KindNodePool, np1(), request{})
		},
		cs: func(t *testing.T, e *env) {
			if err := e.sim.FailNext(10, 503); err != nil {
				t.Fatal(err)
			}
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted},
	}})
}
