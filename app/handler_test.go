package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/apptest"
)

// TestHostPayloadsDriveTheLifecycle posts the host's own payloads (golden
// files) to the real handler and checks the store, the simulator and ARM's
// notification endpoint afterwards.
func TestHostPayloadsDriveTheLifecycle(t *testing.T) {
	r := apptest.New(t, apptest.Options{})
	r.Submit()
	batch := golden(t, "dispatch-cluster-create.json", func() []json.RawMessage {
		item, err := r.App.Store.Get(context.Background(), sub, r.Operation().ID)
		if err != nil {
			t.Fatal(err)
		}
		return []json.RawMessage{item.Body}
	})

	// Change feed delivers the operation: one CS POST, ID recorded.
	resp, body := r.Post("/dispatchOperations", batch)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	if got := r.Resource().ClusterServiceID(); !strings.HasPrefix(got, "/api/aro_hcp/v1alpha1/clusters/") {
		t.Fatalf("clusterServiceID %q after dispatch", got)
	}
	// At-least-once delivery: the same batch again creates nothing more.
	if resp, body = r.Post("/dispatchOperations", batch); resp.StatusCode != http.StatusOK {
		t.Fatalf("redelivery: %d %s", resp.StatusCode, body)
	}
	if n := r.Sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters"); n != 1 {
		t.Fatalf("%d cluster POSTs, want exactly 1", n)
	}

	// Timer ticks while CS moves the cluster to ready.
	tick := readFile(t, "../events/testdata/tick.json")
	deadline := time.Now().Add(10 * time.Second)
	for r.Operation().Properties.Status != arm.ProvisioningStateSucceeded {
		if time.Now().After(deadline) {
			t.Fatalf("operation still %s", r.Operation().Properties.Status)
		}
		r.Sim.Advance(time.Minute)
		if resp, body = r.Post("/pollOperations", tick); resp.StatusCode != http.StatusOK {
			t.Fatalf("tick: %d %s", resp.StatusCode, body)
		}
		if logs := ensureJSON(t, body)["Logs"]; logs == nil {
			t.Fatalf("tick answered without Logs: %s", body)
		}
	}
	res := r.Resource()
	if res.ProvisioningState() != arm.ProvisioningStateSucceeded || res.ActiveOperationID() != "" {
		t.Fatalf("resource %s, activeOperationId %q", res.ProvisioningState(), res.ActiveOperationID())
	}
	op := r.Operation()
	if op.Properties.NotificationURI != "" {
		t.Fatalf("notificationUri not cleared: %q", op.Properties.NotificationURI)
	}
	if got := r.Sink.Got(); len(got) != 1 || got[0].Name != opName || got[0].Status != arm.ProvisioningStateSucceeded || got[0].EndTime == nil {
		t.Fatalf("ARM received %+v", got)
	}

	// ARM polls the status endpoint (forwarded request, ARM's headers).
	get := func(tenantHeader string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, r.Handler.URL+statusPath()+"?api-version=2024-06-10-preview", nil)
		req.Header.Set("X-Ms-Home-Tenant-Id", tenantHeader)
		resp, err := r.Handler.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b [4096]byte
		n, _ := resp.Body.Read(b[:])
		return resp, b[:n]
	}
	resp, body = get(tenant)
	var st arm.OperationStatus
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil || st.Status != arm.ProvisioningStateSucceeded || st.ID != statusPath() {
		t.Fatalf("status: %d %s", resp.StatusCode, body)
	}
	if resp, body = get("00000000-0000-0000-0000-000000000000"); resp.StatusCode != http.StatusNotFound || len(body) != 0 {
		t.Fatalf("another tenant: %d %q, want 404 with an empty body", resp.StatusCode, body)
	}
}

// TestMalformedInputChangesNothing: bad payloads get a 4xx naming the
// problem, and the store sees no write at all.
func TestMalformedInputChangesNothing(t *testing.T) {
	r := apptest.New(t, apptest.Options{})
	r.Submit()
	cursor := feedCursor(t, r.App.Store)
	huge := `{"Data":{"documents":"` + strings.Repeat("x", 17<<20) + `"}}`
	cases := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"not JSON", "/dispatchOperations", `{"Data":`, 400, "JSON"},
		{"body is an array", "/dispatchOperations", `[]`, 400, ""},
		{"missing Data", "/dispatchOperations", `{"Metadata":{}}`, 400, "Data"},
		{"documents missing", "/dispatchOperations", `{"Data":{}}`, 400, "documents"},
		{"documents a number", "/dispatchOperations", `{"Data":{"documents":42}}`, 400, "documents"},
		{"document not an object", "/dispatchOperations", `{"Data":{"documents":[1]}}`, 400, "documents[0]"},
		{"encoded string not an array", "/dispatchOperations", `{"Data":{"documents":"\"{}\""}}`, 400, "documents"},
		{"huge body", "/pollOperations", huge, 413, ""},
		{"huge change-feed body of garbage", "/dispatchOperations", huge, 400, "not an array of documents"},
		{"unknown function", "/frobnicate", `{"Data":{}}`, 404, "frobnicate"},
		{"timer missing", "/pollOperations", `{"Data":{}}`, 400, "timer"},
		{"timer wrong type", "/pollOperations", `{"Data":{"timer":"soon"}}`, 400, "timer"},
		{"timer bad time", "/pollOperations", `{"Data":{"timer":{"ScheduleStatus":{"Last":"yesterday"}}}}`, 400, "Last"},
		{"status as an invocation", "/operationStatus", `{"Data":{}}`, 404, "enableForwardingHttpRequest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := r.Post(c.path, []byte(c.body))
			if resp.StatusCode != c.status {
				t.Fatalf("%s: %d %.300s, want %d", c.path, resp.StatusCode, body, c.status)
			}
			if !strings.Contains(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
			}
			if c.want != "" && !strings.Contains(string(body), c.want) {
				t.Fatalf("answer %.300s does not name %q", body, c.want)
			}
		})
	}
	// ARM-facing errors on the status route.
	for _, c := range []struct{ path, want string }{
		{"/subscriptions/not-a-sub/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + opName, "InvalidSubscriptionId"},
		{"/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/not-a-uuid", "not-a-uuid"},
	} {
		resp, err := r.Handler.Client().Get(r.Handler.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		var b [2048]byte
		n, _ := resp.Body.Read(b[:])
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b[:n]), c.want) {
			t.Errorf("GET %s: %d %s, want 400 naming %q", c.path, resp.StatusCode, b[:n], c.want)
		}
	}
	// Operation documents the engine cannot own (unknown request type, bad
	// resource ID) are logged and skipped: a 200, so the host does not
	// redeliver them forever, and still nothing written.
	for _, bad := range []string{
		`{"id":"x1","partitionKey":"` + sub + `","resourceID":"/subscriptions/` + sub + `/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/x1","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Explode","status":"Accepted","externalId":"` + clusterID + `"}}`,
		`{"id":"x2","partitionKey":"` + sub + `","resourceID":"/subscriptions/` + sub + `/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/x2","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted","externalId":"not/a/resource/id"}}`,
	} {
		body, _ := json.Marshal(map[string]any{"Data": map[string]any{"documents": "[" + bad + "]"}})
		resp, out := r.Post("/dispatchOperations", body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("undispatchable operation: %d %s, want 200", resp.StatusCode, out)
		}
	}
	for _, rec := range r.Logs.Named(t, "dispatch.batch", 2) {
		if rec["skipped"] != float64(1) || rec["dispatched"] != float64(0) {
			t.Errorf("undispatchable operation: record %v, want it reported skipped", rec)
		}
	}
	if n := changesSince(t, r.App.Store, cursor); n != 0 {
		t.Fatalf("malformed input wrote %d documents", n)
	}
	if n := r.Sim.Ledger().Total(); n != 0 {
		t.Fatalf("malformed input reached Clusters Service %d times", n)
	}
}
