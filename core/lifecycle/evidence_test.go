package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Succeeded only on evidence: the two runs in which hcpops once reported
// Succeeded for work that had not happened.

// TestLegacyChildDeleteWaitsForClustersService: a legacy node pool or
// external auth Delete whose resource document is already gone completes
// only when CS answers 404 for its internalId, as upstream's legacy path
// polls it; on that path the document's absence proves nothing.
func TestLegacyChildDeleteWaitsForClustersService(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind document.Kind
		rid  string
		// csDelete: the old frontend's CS DELETE went through, so CS is
		// uninstalling; otherwise CS still has it ready.
		csDelete bool
	}{
		{"node pool uninstalling", document.KindNodePool, nodePoolRID("c1", "np1"), true},
		{"node pool still ready", document.KindNodePool, nodePoolRID("c1", "np1"), false},
		{"external auth uninstalling", document.KindExternalAuth, externalAuthRID("c1", "ea1"), true},
		{"external auth still ready", document.KindExternalAuth, externalAuthRID("c1", "ea1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			op := legacyDocGone(tc.kind, tc.rid, tc.csDelete, 0)(t, e)
			href := e.op(t, op).Properties.InternalID
			before := e.sim.Ledger().Total()
			e.tick(t)
			if got := e.op(t, op); got.Properties.Status.IsTerminal() {
				t.Fatalf("legacy delete is %s while CS still has %s; want it left non-terminal", got.Properties.Status, href)
			}
			if e.sim.Ledger().Total() == before {
				t.Fatalf("the tick did not ask CS about %s", href)
			}
			if !tc.csDelete {
				e.deleteInCS(t, tc.kind, href)
			}
			e.clk.Advance(2 * time.Minute) // past the simulator's uninstall
			// No live sibling witnesses it: CS's 404 completes the delete
			// once it has held over the confirmation window (absence.go).
			throughWindow(t, e, op)
		})
	}
}

// deleteInCS deletes the CS object at href, as a frontend would have.
func (e *env) deleteInCS(t testing.TB, kind document.Kind, href string) {
	t.Helper()
	var err error
	switch kind {
	case document.KindCluster:
		err = e.cs.DeleteCluster(context.Background(), href)
	case document.KindNodePool:
		err = e.cs.DeleteNodePool(context.Background(), href)
	case document.KindExternalAuth:
		err = e.cs.DeleteExternalAuth(context.Background(), href)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// testCSR is the shape of what the 2026-09-01-preview frontend stores; the
// backend never parses it.
const testCSR = "-----BEGIN CERTIFICATE REQUEST-----\nMIIBVjCB/gIBADBOMS0wKwYDVQQDDCRzeXN0ZW06Y3VzdG9tZXItYnJlYWstZ2xhc3M6c3lzdGVtLWFkbWluMR0wGwYDVQQKDBRzeXN0ZW06bWFzdGVycw==\n-----END CERTIFICATE REQUEST-----\n"

// csrRequest writes a RequestCredential as the 2026-09-01-preview
// frontend does: the certificate signing request on the operation.
// internalID is what an earlier hcpops may have recorded ("" for none).
func (e *env) csrRequest(t testing.TB, cluster, internalID string, r request) string {
	t.Helper()
	op, _ := e.newOp(t, document.RequestRequestCredential, clusterRID(cluster), internalID, r)
	op.Properties.SystemAdminCredentialRequest = &document.SystemAdminCredentialRequest{CertificateSigningRequest: testCSR}
	body, err := op.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}})
	return op.Name()
}

// TestCertificateSigningCredentialRequestFails: Clusters Service cannot
// sign a customer's CSR (the break-glass API of the ocm-sdk-go in use has
// no such field), so the request fails at dispatch with a reason, never
// Succeeded with a credential nobody asked for, and ARM's result poll gets
// the Failed answer of its contract.
func TestCertificateSigningCredentialRequestFails(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	op := e.csrRequest(t, "c1", "", request{notify: true})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	got := e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInvalidRequestContent)
	for _, want := range []string{"certificate-signing", "management-cluster signer", "not supported by this backend"} {
		if !strings.Contains(strings.ToLower(got.Properties.Error.Message), want) {
			t.Errorf("error message %q does not say %q", got.Properties.Error.Message, want)
		}
	}
	if got.Properties.InternalID != "" {
		t.Errorf("internalId = %q, want none: no credential was issued", got.Properties.InternalID)
	}
	if n := e.sim.Ledger().Count("POST", cs.ClustersMgmtPrefix+"/clusters/{id}/break_glass_credentials"); n != 0 {
		t.Errorf("%d break-glass credentials requested for a CSR, want none", n)
	}
	if calls := e.sink.calls(op); len(calls) != 1 || calls[0].Body.Status != arm.ProvisioningStateFailed {
		t.Errorf("notifications = %+v, want one Failed", calls)
	}
	res, err := e.reads.Result(context.Background(), armread.StatusRequest{SubscriptionID: testSub, Location: "eastus",
		OperationName: op, HomeTenantID: testTenant, ClientObjectID: testClient})
	if err != nil || res.Status != arm.ProvisioningStateFailed || res.Body != nil {
		t.Errorf("result = %v, %v; want the Failed answer (ARM reads the error from the status endpoint)", res, err)
	}
}

// TestCertificateSigningRequestAlreadyDispatched: an operation an earlier
// hcpops dispatched as break-glass (an internalId set) fails on its next
// poll instead of succeeding with the wrong credential.
func TestCertificateSigningRequestAlreadyDispatched(t *testing.T) {
	e := newEnv(t)
	clusterHref := e.readyCluster(t, "c1")
	cred, err := e.cs.PostBreakGlassCredential(context.Background(), clusterHref)
	if err != nil {
		t.Fatal(err)
	}
	op := e.csrRequest(t, "c1", cred.Href, request{})
	e.clk.Advance(2 * time.Minute) // the credential is issued by now
	e.tick(t)
	e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInvalidRequestContent)
}
