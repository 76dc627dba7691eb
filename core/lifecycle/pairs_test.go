package lifecycle

import (
	"context"
	"slices"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// TestEveryRequestAndKind drives each (request, kind) pair end to end, the
// way the Functions host would: change feed into DispatchDocuments, timer
// ticks, simulated time passing.
func TestEveryRequestAndKind(t *testing.T) {
	ctx := context.Background()
	np, ea := nodePoolRID("c1", "NP1"), externalAuthRID("c1", "Default")
	tests := []struct {
		name string
		// run prepares what the pair needs, makes the request and returns
		// the operations to drive.
		run   func(t *testing.T, e *env) []string
		check func(t *testing.T, e *env, ops []string)
	}{{
		name: "cluster create",
		run: func(t *testing.T, e *env) []string {
			return []string{e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true})}
		},
		check: func(t *testing.T, e *env, _ []string) {
			r := e.resource(t, clusterRID("c1"))
			st, err := e.cs.GetClusterStatus(ctx, r.ClusterServiceID())
			if err != nil || st.State != cs.ClusterStateReady {
				t.Errorf("CS cluster status = %+v, %v; want ready", st, err)
			}
		},
	}, {
		name: "cluster update",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			return []string{e.update(t, clusterRID("c1"), request{notify: true}, func(s *spec) {
				s.cluster.NodeDrainTimeoutMinutes = new(45)
				s.cluster.AuthorizedCIDRs = []string{"10.0.0.0/8", "192.168.0.0/16"}
			})}
		},
		check: func(t *testing.T, e *env, ops []string) {
			href := e.resource(t, clusterRID("c1")).ClusterServiceID()
			c, err := e.cs.GetCluster(ctx, href)
			if err != nil {
				t.Fatalf("GetCluster: %v", err)
			}
			if c.NodeDrainGracePeriodMinutes != 45 || !sameSet(c.AuthorizedCIDRs, []string{"10.0.0.0/8", "192.168.0.0/16"}) {
				t.Errorf("CS cluster = drain %d, CIDRs %v; want the update applied", c.NodeDrainGracePeriodMinutes, c.AuthorizedCIDRs)
			}
			if got := e.op(t, ops[0]).Properties.InternalID; got != "" {
				t.Errorf("update internalId = %q, want none (upstream writes none on an update)", got)
			}
		},
	}, {
		name: "cluster delete with children",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindNodePool, np, request{}))
			e.drive(t, e.create(t, document.KindExternalAuth, ea, request{}))
			return e.remove(t, clusterRID("c1"), request{notify: true})
		},
		check: func(t *testing.T, e *env, ops []string) {
			if len(ops) != 3 {
				t.Fatalf("delete made %d operations, want the cluster's and two implicit ones", len(ops))
			}
			for _, rid := range []string{clusterRID("c1"), np, ea} {
				if r := e.resource(t, rid); r != nil {
					t.Errorf("%s still exists", rid)
				}
			}
		},
	}, {
		name: "node pool create",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			return []string{e.create(t, document.KindNodePool, np, request{notify: true})}
		},
		check: func(t *testing.T, e *env, _ []string) {
			r := e.resource(t, np)
			want := cs.NodePoolHref(e.resource(t, clusterRID("c1")).ClusterServiceID(), "np1")
			if r.ClusterServiceID() != want || r.ProvisioningState() != arm.ProvisioningStateSucceeded {
				t.Errorf("node pool = %s %s, want %s Succeeded", r.ClusterServiceID(), r.ProvisioningState(), want)
			}
			if got := e.csPosts(cs.ClustersPath + "/{id}/node_pools"); got != 1 {
				t.Errorf("node pool POSTs = %d, want 1", got)
			}
		},
	}, {
		name: "node pool update",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindNodePool, np, request{}))
			return []string{e.update(t, np, request{notify: true}, func(s *spec) {
				s.nodePool.Replicas = 5
			})}
		},
		check: func(t *testing.T, e *env, _ []string) {
			got, err := e.cs.GetNodePool(ctx, e.resource(t, np).ClusterServiceID())
			if err != nil || got.Replicas != 5 {
				t.Errorf("CS node pool = %+v, %v; want 5 replicas", got, err)
			}
		},
	}, {
		name: "node pool delete",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindNodePool, np, request{}))
			return e.remove(t, np, request{notify: true})
		},
		check: func(t *testing.T, e *env, _ []string) {
			if e.resource(t, np) != nil {
				t.Errorf("node pool document still exists")
			}
			if e.resource(t, clusterRID("c1")) == nil {
				t.Errorf("the parent cluster was deleted too")
			}
		},
	}, {
		name: "external auth create",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			return []string{e.create(t, document.KindExternalAuth, ea, request{notify: true})}
		},
		check: func(t *testing.T, e *env, _ []string) {
			r := e.resource(t, ea)
			want := cs.ExternalAuthHref(e.resource(t, clusterRID("c1")).ClusterServiceID(), "default")
			if r.ClusterServiceID() != want || r.ProvisioningState() != arm.ProvisioningStateSucceeded {
				t.Errorf("external auth = %s %s, want %s Succeeded", r.ClusterServiceID(), r.ProvisioningState(), want)
			}
		},
	}, {
		name: "external auth update",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindExternalAuth, ea, request{}))
			return []string{e.update(t, ea, request{notify: true}, func(s *spec) {
				s.externalAuth.Audiences = []string{"app-1", "app-2"}
			})}
		},
		check: func(t *testing.T, e *env, _ []string) {
			got, err := e.cs.GetExternalAuth(ctx, e.resource(t, ea).ClusterServiceID())
			if err != nil || !slices.Equal(got.Audiences, []string{"app-1", "app-2"}) {
				t.Errorf("CS external auth = %+v, %v; want both audiences", got, err)
			}
		},
	}, {
		name: "external auth delete",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindExternalAuth, ea, request{}))
			return e.remove(t, ea, request{notify: true})
		},
		check: func(t *testing.T, e *env, _ []string) {
			if e.resource(t, ea) != nil {
				t.Errorf("external auth document still exists")
			}
		},
	}, {
		name: "request credential",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			return []string{e.requestCredential(t, "c1", request{notify: true})}
		},
		check: func(t *testing.T, e *env, ops []string) {
			href := e.op(t, ops[0]).Properties.InternalID
			cred, err := e.cs.GetBreakGlassCredential(ctx, href)
			if err != nil || cred.Status != cs.CredentialStateIssued {
				t.Errorf("credential %q = %+v, %v; want issued", href, cred, err)
			}
			if r := e.resource(t, clusterRID("c1")); r.ProvisioningState() != arm.ProvisioningStateSucceeded || r.ActiveOperationID() != "" {
				t.Errorf("the cluster was touched: %s, active %q", r.ProvisioningState(), r.ActiveOperationID())
			}
		},
	}, {
		name: "revoke credentials",
		run: func(t *testing.T, e *env) []string {
			e.readyCluster(t, "c1")
			e.drive(t, e.requestCredential(t, "c1", request{}))
			return []string{e.revokeCredentials(t, "c1", request{notify: true})}
		},
		check: func(t *testing.T, e *env, _ []string) {
			r := e.resource(t, clusterRID("c1"))
			if r.RevokeCredentialsOperationID() != "" {
				t.Errorf("revokeCredentialsOperationId = %q, want it cleared", r.RevokeCredentialsOperationID())
			}
			creds, err := e.cs.ListBreakGlassCredentials(ctx, r.ClusterServiceID())
			if err != nil || len(creds) != 1 || creds[0].Status != cs.CredentialStateRevoked {
				t.Errorf("credentials = %+v, %v; want one revoked", creds, err)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ops := tc.run(t, e)
			e.drive(t, ops...)
			for i, name := range ops {
				op := e.wantOp(t, name, arm.ProvisioningStateSucceeded, "")
				if op.Properties.NotificationURI != "" {
					t.Errorf("operation %d: notificationUri not cleared", i)
				}
				if i == 0 {
					if calls := e.sink.calls(name); len(calls) != 1 || calls[0].body.Status != arm.ProvisioningStateSucceeded {
						t.Errorf("notifications = %+v, want one Succeeded", calls)
					}
				}
			}
			tc.check(t, e, ops)
		})
	}
}
