package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
)

// subscriptionDoc is ARO-HCP's subscription document for sub in state.
func subscriptionDoc(state, tenantID string) string {
	rid := "/subscriptions/" + sub
	return fmt.Sprintf(`{"id":%q,"partitionKey":%q,"resourceID":%q,"resourceType":"Microsoft.Resources/subscriptions",
	  "properties":{"cosmosMetadata":{"resourceID":%q,"instanceVersion":1,"partitionKey":%q},"resourceId":%q,"state":%q,
	  "registrationDate":"Fri, 13 Mar 2026 22:04:11 GMT","properties":{"tenantId":%q,"registeredFeatures":[]}}}`,
		document.SubscriptionCosmosID(sub), sub, rid, rid, sub, rid, state, tenantID)
}

// TestRequestGates walks ARO-HCP's api-version and subscription-state
// table through the real handler, on both the status and the result route.
func TestRequestGates(t *testing.T) {
	unregistered := "Request is not allowed in unregistered subscription '" + sub + "'."
	for _, tc := range []struct {
		name     string
		settings map[string]string
		subState string // "" : no subscription document
		query    string
		status   int // 0: admitted (status 200, result 202)
		code     string
		message  string
	}{
		{name: "missing api-version", subState: "Registered", query: "", status: 400, code: "InvalidParameter",
			message: "The request is missing required parameter 'api-version'."},
		{name: "unknown api-version", subState: "Registered", query: "?api-version=2023-01-01", status: 400, code: "InvalidResourceType",
			message: "The resource type 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters' could not be found API version '2023-01-01'."},
		{name: "configured api-version", settings: map[string]string{"HCPOPS_API_VERSIONS": "2099-01-01"}, subState: "Registered", query: "?api-version=2099-01-01"},
		{name: "default not configured", settings: map[string]string{"HCPOPS_API_VERSIONS": "2099-01-01"}, query: "?api-version=" + armAPIVersion, status: 400, code: "InvalidResourceType"},
		{name: "registered", subState: "Registered", query: "?api-version=2026-09-01-preview"},
		{name: "warned", subState: "Warned", query: "?api-version=" + armAPIVersion},
		{name: "suspended", subState: "Suspended", query: "?api-version=" + armAPIVersion},
		{name: "unregistered", subState: "Unregistered", query: "?api-version=" + armAPIVersion, status: 400, code: "InvalidSubscriptionState", message: unregistered},
		{name: "deleted", subState: "Deleted", query: "?api-version=" + armAPIVersion, status: 400, code: "InvalidSubscriptionState",
			message: "Request is not allowed in subscription in state 'Deleted'."},
		{name: "unknown state", subState: "Frozen", query: "?api-version=" + armAPIVersion, status: 500, code: arm.CodeInternalServerError},
		{name: "no document, default", query: "?api-version=" + armAPIVersion},
		{name: "no document, required", settings: map[string]string{"HCPOPS_SUBSCRIPTION_DOCUMENT": "required"}, query: "?api-version=" + armAPIVersion,
			status: 400, code: "InvalidSubscriptionState", message: unregistered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newARMRig(t, tc.settings)
			op := r.accepted(r.fe.PutCluster(context.Background(), clusterRID("g"), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, r.opts()))
			if tc.subState != "" {
				r.put(subscriptionDoc(tc.subState, tenant))
			}
			cursor := feedCursor(t, r.App.Store)
			for _, route := range []struct {
				path    string
				success int
			}{
				{document.OperationID(sub, "eastus", op.Name()), http.StatusOK},
				{document.OperationResultID(sub, "eastus", op.Name()), http.StatusAccepted},
			} {
				got := r.get(route.path+tc.query, caller()...)
				if tc.status == 0 {
					if got.status != route.success {
						t.Fatalf("%s: %d %s, want %d", route.path, got.status, got.body, route.success)
					}
					continue
				}
				e := armErrorOf(t, got.body)
				if got.status != tc.status || e.Code != tc.code || (tc.message != "" && e.Message != tc.message) {
					t.Fatalf("%s: %d %+v, want %d %s %q", route.path, got.status, e, tc.status, tc.code, tc.message)
				}
			}
			if n := changesSince(t, r.App.Store, cursor); n != 0 {
				t.Errorf("a status or result read wrote %d documents", n)
			}
		})
	}
}

// TestHomeTenantFromSubscription: ARM leaves X-Ms-Home-Tenant-Id empty for
// some callers; ARO-HCP fills it from the subscription before the
// visibility check, so the operation's tenant still matches.
func TestHomeTenantFromSubscription(t *testing.T) {
	r := newARMRig(t, nil)
	op := r.accepted(r.fe.PutCluster(context.Background(), clusterRID("h"), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, r.opts()))
	noTenant := []string{"X-Ms-Client-Object-Id", armClient}
	// Without a subscription document there is nothing to fill it from.
	if got := r.get(statusPathOf(op.Name()), noTenant...); got.status != http.StatusNotFound {
		t.Fatalf("no tenant, no subscription: %d %s", got.status, got.body)
	}
	r.put(subscriptionDoc("Registered", strings.ToUpper(tenant)))
	if got := r.get(statusPathOf(op.Name()), noTenant...); got.status != http.StatusOK {
		t.Fatalf("status, tenant from the subscription: %d %s", got.status, got.body)
	}
	if got := r.get(resultPath(op.Name()), noTenant...); got.status != http.StatusAccepted {
		t.Fatalf("result, tenant from the subscription: %d %s", got.status, got.body)
	}
	// A header that is set is not overridden.
	if got := r.get(statusPathOf(op.Name()), "X-Ms-Home-Tenant-Id", "11111111-1111-1111-1111-111111111111", "X-Ms-Client-Object-Id", armClient); got.status != http.StatusNotFound {
		t.Fatalf("another tenant's header: %d %s", got.status, got.body)
	}
}
