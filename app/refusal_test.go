package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
)

// TestRefusedWorkFailsAtOnce: what can never be done fails on its first
// dispatch with an error that says why, through the real handler and the
// CS simulator over HTTP, and ARM reads that error from the status
// endpoint and, with a 400, from the result poll.
func TestRefusedWorkFailsAtOnce(t *testing.T) {
	r := newARMRig(t, nil)
	ctx := context.Background()
	cluster := clusterRID("c1")
	r.drive(r.accepted(r.fe.PutCluster(ctx, cluster, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, r.opts())))

	csr, err := document.NewOperation(document.NewOperationParams{Request: document.RequestRequestCredential, ExternalID: cluster,
		Location: "eastus", Name: uuid.NewString(), Now: time.Now(), TenantID: tenant, ClientID: armClient})
	if err != nil {
		t.Fatal(err)
	}
	csr.Properties.SystemAdminCredentialRequest = &document.SystemAdminCredentialRequest{
		CertificateSigningRequest: "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n"}
	body, err := csr.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	r.put(string(body))

	for _, tc := range []struct {
		name string
		op   *document.OperationDocument
		want string // in the status endpoint's error message
	}{{
		name: "negative replicas (hcpops's own check)",
		op: r.accepted(r.fe.PutNodePool(ctx, cluster+"/nodePools/np1", frontend.NodePoolSpec{VersionID: "4.20.3",
			ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: -3}, r.opts())),
		want: "The node pool's properties.replicas is -3; it must not be negative.",
	}, {
		name: "an issuer CS refuses",
		op: r.accepted(r.fe.PutExternalAuth(ctx, cluster+"/externalAuths/ea1", frontend.ExternalAuthSpec{
			IssuerURL: "http://issuer.example.com", Audiences: []string{"app"}}, r.opts())),
		want: "Attribute 'issuer.url' must be an https URL, got 'http://issuer.example.com' (CLUSTERS-MGMT-400)",
	}, {
		name: "a certificate-signing credential request",
		op:   csr,
		want: "Certificate-signing credential requests need the management-cluster signer and are not supported by this backend",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r.deliver() // one dispatch, no tick and no time passing
			if got := r.op(tc.op.Name()); got.Properties.Status != arm.ProvisioningStateFailed {
				t.Fatalf("after its dispatch the operation is %s, want Failed", got.Properties.Status)
			}
			st := r.get(statusPathOf(tc.op.Name()), caller()...)
			if st.status != http.StatusOK || !strings.Contains(string(st.body), `"status": "Failed"`) || !strings.Contains(string(st.body), tc.want) {
				t.Errorf("status endpoint: %d %s; want Failed with %q", st.status, st.body, tc.want)
			}
			// The result is what the synchronous request would have got:
			// the operation's own error, a 400 for what was refused.
			res := r.get(resultPath(tc.op.Name()), caller()...)
			if e := armErrorOf(t, res.body); res.status != http.StatusBadRequest || e.Code != arm.CodeInvalidRequestContent || !strings.Contains(e.Message, tc.want) {
				t.Errorf("result endpoint: %d %s; want 400 %s with %q", res.status, res.body, arm.CodeInvalidRequestContent, tc.want)
			}
		})
	}
	if n := r.Sim.Ledger().Count("POST", "/api/clusters_mgmt/v1/clusters/{id}/break_glass_credentials"); n != 0 {
		t.Errorf("%d break-glass credentials requested, want none", n)
	}
}
