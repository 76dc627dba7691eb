package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestCredentialRequest: credentialRequest's decisions, one tick each:
// waiting for the cluster to be in CS, the POST with its href recorded as
// internalId, Succeeded once CS issued it, Canceled while a revocation
// runs, a certificate-signing request refused; the cluster itself is left
// alone throughout.
func TestCredentialRequest(t *testing.T) {
	requested := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		op := e.requestCredential(t, "c1", request{})
		e.feed(t)
		e.clk.Advance(2 * time.Minute)
		return op
	}
	runRules(t, []rule{{
		name: "cluster not in CS: left for a later tick",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.requestCredential(t, "c1", request{})
			e.feed(t)
			notInCS(t, e)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateSucceeded, noCS: true},
	}, {
		name:   "not dispatched: the tick POSTs it and records its href",
		before: requested,
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"POST " + csCredentials: 1},
			then: func(t *testing.T, _ *env, op *document.OperationDocument) {
				if !strings.Contains(op.Properties.InternalID, "/break_glass_credentials/") {
					t.Errorf("internalId = %q, want the credential's href", op.Properties.InternalID)
				}
			}},
	}, {
		name: "CS issued it: Succeeded",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := dispatched(t, e, e.requestCredential(t, "c1", request{}))
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"POST " + csCredentials: 0}},
	}, {
		name: "a revocation running: Canceled",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.racingCredentialRequest(t, "c1", request{})
			e.feed(t)
			// The cluster names a revocation under way.
			edit(t, e, clusterRID("c1"), func(s obj) { s["revokeCredentialsOperationId"] = uuid.NewString() })
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateCanceled, code: arm.CodeCanceled, message: "This operation was superseded by another",
			calls: map[string]int{"POST " + csCredentials: 0}},
	}, {
		name: "a certificate-signing request: Failed, never sent to CS",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			op := e.csrRequest(t, "c1", "", request{})
			e.feed(t)
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: after{status: arm.ProvisioningStateFailed, code: arm.CodeInvalidRequestContent,
			target: "systemAdminCredentialRequest.certificateSigningRequest", resource: arm.ProvisioningStateSucceeded,
			calls: map[string]int{"POST " + csCredentials: 0}},
	}})
}
