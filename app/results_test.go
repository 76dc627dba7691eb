package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
)

// TestOperationResults walks every row of ARM's results table through the
// real handler, with operations the lifecycle itself drove to their state.
func TestOperationResults(t *testing.T) {
	r := newARMRig(t, nil)
	ctx := context.Background()
	id := clusterRID("c1")

	create := r.accepted(r.fe.PutCluster(ctx, id, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable",
		Tags: map[string]string{"env": "dev"}}, r.opts()))

	// Running: 202, no body, Location back to this endpoint on ARM's host
	// with the caller's api-version.
	got := r.get(resultPath(create.Name()), append(caller(), "Referer", "https://management.azure.com"+resultPath(create.Name())+"&x=1")...)
	if got.status != http.StatusAccepted || len(got.body) != 0 {
		t.Fatalf("running create: %d %q", got.status, got.body)
	}
	loc, err := url.Parse(got.header.Get("Location"))
	if err != nil || loc.Scheme != "https" || loc.Host != "management.azure.com" ||
		loc.Path != document.OperationResultID(sub, "eastus", create.Name()) || loc.Query().Get("api-version") != armAPIVersion {
		t.Fatalf("Location = %q", got.header.Get("Location"))
	}
	if got.header.Get("Retry-After") != "10" || got.header.Get("Azure-AsyncOperation") != "" {
		t.Errorf("a running result carries more than Location and Retry-After (the poll interval, 10): %v", got.header)
	}
	// No Referer: the request's own host.
	if got := r.get(resultPath(create.Name()), caller()...); !strings.HasPrefix(got.header.Get("Location"), "https://"+strings.TrimPrefix(r.Handler.URL, "http://")+"/subscriptions/") {
		t.Errorf("Location without a Referer = %q", got.header.Get("Location"))
	}

	r.drive(create)
	// Create succeeded: 201 and the resource as GET shows it.
	got = r.get(resultPath(create.Name()), caller()...)
	var body struct {
		ID         string            `json:"id"`
		Name       string            `json:"name"`
		Type       string            `json:"type"`
		Location   string            `json:"location"`
		Tags       map[string]string `json:"tags"`
		Properties map[string]any    `json:"properties"`
	}
	if got.status != http.StatusCreated || got.header.Get("Content-Type") != "application/json" || json.Unmarshal(got.body, &body) != nil {
		t.Fatalf("create result: %d %s", got.status, got.body)
	}
	if body.ID != id || body.Name != "c1" || body.Type != arm.ClusterResourceType || body.Location != "eastus" || body.Tags["env"] != "dev" ||
		body.Properties["provisioningState"] != "Succeeded" {
		t.Errorf("create result body %s", got.body)
	}
	for _, internal := range []string{"serviceProviderProperties", "clusterServiceID", "cosmosMetadata"} {
		if strings.Contains(string(got.body), internal) {
			t.Errorf("create result shows %s:\n%s", internal, got.body)
		}
	}

	// Update succeeded: 200 and the body.
	update := r.accepted(r.fe.PutCluster(ctx, id, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable",
		AuthorizedCIDRs: []string{"10.0.0.0/8"}}, r.opts()))
	r.drive(update)
	if got := r.get(resultPath(update.Name()), caller()...); got.status != http.StatusOK || !strings.Contains(string(got.body), `"provisioningState": "Succeeded"`) {
		t.Fatalf("update result: %d %s", got.status, got.body)
	}

	// RequestCredential: 200 with the credential read live from CS.
	cred := r.accepted(r.fe.RequestCredential(ctx, id, r.opts()))
	r.drive(cred)
	got = r.get(resultPath(cred.Name()), caller()...)
	var c struct {
		ExpirationTimestamp time.Time `json:"expirationTimestamp"`
		Kubeconfig          string    `json:"kubeconfig"`
	}
	if got.status != http.StatusOK || json.Unmarshal(got.body, &c) != nil || !strings.Contains(c.Kubeconfig, "kind: Config") || c.ExpirationTimestamp.IsZero() {
		t.Fatalf("credential result: %d %s", got.status, got.body)
	}
	token := c.Kubeconfig[strings.Index(c.Kubeconfig, "token: ")+len("token: "):]
	token = strings.TrimSpace(token)
	if n := r.Sim.Ledger().Count("GET", "/api/clusters_mgmt/v1/clusters/{id}/break_glass_credentials/{bg}"); n == 0 {
		t.Errorf("the credential was not read from CS")
	}
	if r.storeHolds(token) || r.storeHolds("kind: Config") {
		t.Errorf("the kubeconfig was written to the store")
	}
	if strings.Contains(r.Logs.String(), token) || strings.Contains(r.Logs.String(), "kind: Config") {
		t.Errorf("the kubeconfig appears in a log line:\n%s", r.Logs.String())
	}

	// RevokeCredentials and Delete: 204, no body.
	revoke := r.accepted(r.fe.RevokeCredentials(ctx, id, r.opts()))
	r.drive(revoke)
	if got := r.get(resultPath(revoke.Name()), caller()...); got.status != http.StatusNoContent || len(got.body) != 0 {
		t.Fatalf("revoke result: %d %q", got.status, got.body)
	}
	// The credential is revoked now; its result is what CS says of it.
	del := r.accepted(r.fe.Delete(ctx, id, r.opts()))
	r.drive(del)
	if got := r.get(resultPath(del.Name()), caller()...); got.status != http.StatusNoContent || len(got.body) != 0 {
		t.Fatalf("delete result: %d %q", got.status, got.body)
	}
	// The create's resource is gone now: its result is 404.
	if got := r.get(resultPath(create.Name()), caller()...); got.status != http.StatusNotFound || armErrorOf(t, got.body).Code != arm.CodeResourceNotFound {
		t.Fatalf("result of a create whose resource is gone: %d %s", got.status, got.body)
	}
	// The cluster is gone from CS, and with it the credential: 404.
	if got := r.get(resultPath(cred.Name()), caller()...); got.status != http.StatusNotFound || armErrorOf(t, got.body).Code != arm.CodeResourceNotFound {
		t.Fatalf("result of a credential CS no longer has: %d %s", got.status, got.body)
	}
}

// TestOperationResultsRefusals: missing, invisible, failed and canceled
// operations, and credential requests hcpops does not serve.
func TestOperationResultsRefusals(t *testing.T) {
	r := newARMRig(t, nil)
	ctx := context.Background()
	failed := r.accepted(r.fe.PutCluster(ctx, clusterRID("f"), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, r.opts()))
	r.setStatus(failed.Name(), arm.ProvisioningStateFailed)
	canceled := r.accepted(r.fe.PutCluster(ctx, clusterRID("k"), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, r.opts()))
	r.setStatus(canceled.Name(), arm.ProvisioningStateCanceled)

	for _, tc := range []struct {
		name   string
		path   string
		hdr    []string
		status int
		code   string
	}{
		{"missing", resultPath("8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11"), caller(), 404, arm.CodeResourceNotFound},
		{"another tenant", resultPath(failed.Name()), []string{"X-Ms-Home-Tenant-Id", "11111111-1111-1111-1111-111111111111", "X-Ms-Client-Object-Id", armClient}, 404, arm.CodeResourceNotFound},
		{"another client", resultPath(failed.Name()), []string{"X-Ms-Home-Tenant-Id", tenant}, 404, arm.CodeResourceNotFound},
		{"two tenants", resultPath(failed.Name()), append(caller(), "X-Ms-Home-Tenant-Id", "11111111-1111-1111-1111-111111111111"), 404, arm.CodeResourceNotFound},
		{"another subscription", strings.Replace(resultPath(failed.Name()), sub, "00000000-0000-0000-0000-000000000001", 1), caller(), 404, arm.CodeResourceNotFound},
		{"failed", resultPath(failed.Name()), caller(), 500, arm.CodeInternalServerError},
		{"canceled", resultPath(canceled.Name()), caller(), 409, arm.CodeCanceled},
		{"bad operation id", document.OperationResultID(sub, "eastus", "nope") + "?api-version=" + armAPIVersion, caller(), 400, "InvalidResourceName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.get(tc.path, tc.hdr...)
			if got.status != tc.status || armErrorOf(t, got.body).Code != tc.code {
				t.Fatalf("%d %s, want %d %s", got.status, got.body, tc.status, tc.code)
			}
		})
	}

	// A certificate-signing credential request (api-version
	// 2026-09-01-preview) is ARO-HCP's frontend's to answer: 500, logged.
	csr, err := document.NewOperation(document.NewOperationParams{Request: document.RequestRequestCredential, ExternalID: clusterRID("f"),
		Location: "eastus", Name: "5b0e1d4c-3a2f-4e6d-9c8b-7a6f5e4d3c2b", Now: time.Now(), TenantID: tenant, ClientID: armClient})
	if err != nil {
		t.Fatal(err)
	}
	csr.Properties.SystemAdminCredentialRequest = &document.SystemAdminCredentialRequest{CertificateSigningRequest: "-----BEGIN CERTIFICATE REQUEST-----"}
	csr.Properties.SetStatus(time.Now(), arm.ProvisioningStateSucceeded, nil)
	b, err := csr.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	r.put(string(b))
	if got := r.get(resultPath(csr.Name()), caller()...); got.status != 500 {
		t.Fatalf("CSR credential result: %d %s", got.status, got.body)
	}
	if !strings.Contains(r.Logs.String(), "certificate-signing credential request") {
		t.Errorf("no log line says why the CSR result is refused")
	}
}
