package lifecycle

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestCredentialRevoke: credentialRevoke's decisions, one tick each: the
// DELETE of every credential and the Deleting marker, Deleting while CS
// revokes, Succeeded once all are revoked with the cluster's pointer
// cleared, and no dispatch when the cluster names another revocation.
func TestCredentialRevoke(t *testing.T) {
	issued := func(t *testing.T, e *env) {
		e.readyCluster(t, "c1")
		e.drive(t, e.requestCredential(t, "c1", request{}))
	}
	runRules(t, []rule{{
		name: "not dispatched: the tick DELETEs the credentials and marks it Deleting",
		before: func(t *testing.T, e *env) string {
			issued(t, e)
			op := e.revokeCredentials(t, "c1", request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"DELETE " + csCredentials: 1}},
	}, {
		name: "CS revoking: Deleting",
		before: func(t *testing.T, e *env) string {
			issued(t, e)
			return dispatched(t, e, e.revokeCredentials(t, "c1", request{}))
		},
		want: after{status: arm.ProvisioningStateDeleting, calls: map[string]int{"DELETE " + csCredentials: 0}},
	}, {
		name: "all revoked: Succeeded, the cluster's pointer cleared",
		before: func(t *testing.T, e *env) string {
			issued(t, e)
			op := dispatched(t, e, e.revokeCredentials(t, "c1", request{}))
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded,
			then: func(t *testing.T, e *env, _ *document.OperationDocument) {
				if id := e.resource(t, clusterRID("c1")).RevokeCredentialsOperationID(); id != "" {
					t.Errorf("revokeCredentialsOperationId = %q, want it cleared", id)
				}
			}},
	}, {
		name: "the cluster names another revocation: not dispatched",
		before: func(t *testing.T, e *env) string {
			issued(t, e)
			op := e.revokeCredentials(t, "c1", request{})
			e.feed(t)
			edit(t, e, clusterRID("c1"), func(s obj) { s["revokeCredentialsOperationId"] = uuid.NewString() })
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, calls: map[string]int{"DELETE " + csCredentials: 0}},
	}})
}
