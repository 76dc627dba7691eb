package operationstatus

import (
	"net/http"
	"strings"
	"testing"
)

// TestIdentityHeaders: identity headers match case-insensitively, and
// conflicting values of one header hide the operation every time, in both
// the envelope and the forwarded form (the issue saw 200 in 2 of 6).
func TestIdentityHeaders(t *testing.T) {
	const other = "00000000-0000-0000-0000-000000000000"
	params := `"Method":"GET","Params":{"subscriptionId":"` + sub + `","location":"eastus","operationId":"` + opID + `"}`
	tests := []struct {
		name       string
		headers    string // Data.req.Headers
		wantStatus string
		wantTenant string
	}{
		{"lower-case spelling", `{"x-ms-home-tenant-id":["` + tenant + `"]}`, "200", tenant},
		{"two spellings, one value", `{"x-ms-home-tenant-id":["` + tenant + `"],"X-Ms-Home-Tenant-Id":"` + tenant + `"}`, "200", tenant},
		{"values differ only in case", `{"x-ms-home-tenant-id":["` + tenant + `"],"X-MS-HOME-TENANT-ID":["` + strings.ToUpper(tenant) + `"]}`, "200", tenant},
		{"two spellings, two values", `{"x-ms-home-tenant-id":["` + tenant + `"],"X-Ms-Home-Tenant-Id":["` + other + `"]}`, "404", ""},
		{"two values in one array", `{"X-Ms-Home-Tenant-Id":["` + tenant + `","` + other + `"]}`, "404", ""},
		{"client object id conflict", `{"X-Ms-Home-Tenant-Id":["` + tenant + `"],"x-ms-client-object-id":["` + client + `"],"X-MS-CLIENT-OBJECT-ID":["` + other + `"]}`, "404", ""},
		{"unreadable value", `{"X-Ms-Home-Tenant-Id":[1]}`, "404", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{out: sampleStatus()}
			ts := newServer(t, rec)
			// Map order is random per iteration: repeat so a coin toss shows.
			for i := 0; i < 20; i++ {
				got := postEnvelope(t, ts, []byte(`{"Data":{"req":{`+params+`,"Headers":`+tt.headers+`}}}`))
				res := got.Outputs.Res
				if got.Status != http.StatusOK || res.StatusCode != tt.wantStatus {
					t.Fatalf("attempt %d: invocation %d, res.statusCode %s, want %s", i, got.Status, res.StatusCode, tt.wantStatus)
				}
				if tt.wantStatus == "404" && res.Body != "" {
					t.Fatalf("hidden operation answered a body %q", res.Body)
				}
			}
			if tt.wantStatus == "404" {
				if rec.calls() != 0 {
					t.Fatalf("conflicting identity reached the reader %d times", rec.calls())
				}
				return
			}
			for _, r := range rec.reqs {
				if r.HomeTenantID != tt.wantTenant && r.HomeTenantID != strings.ToUpper(tt.wantTenant) {
					t.Fatalf("reader saw tenant %q, want %q", r.HomeTenantID, tt.wantTenant)
				}
			}
		})
	}
}

// TestForwardedIdentityHeaderConflict: a header sent twice with different
// values is hidden too, not decided by which came first.
func TestForwardedIdentityHeaderConflict(t *testing.T) {
	rec := &recordingReader{out: sampleStatus()}
	ts := newServer(t, rec)
	for _, vals := range [][]string{{tenant, "00000000-0000-0000-0000-000000000000"}, {tenant, tenant}} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+statusPath(sub, opID), nil)
		for _, v := range vals {
			req.Header.Add("x-ms-home-tenant-id", v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusOK
		if vals[0] != vals[1] {
			want = http.StatusNotFound
		}
		if resp.StatusCode != want {
			t.Errorf("tenant headers %q: %d, want %d", vals, resp.StatusCode, want)
		}
	}
	if rec.calls() != 1 {
		t.Fatalf("reader called %d times, want once (only the agreeing request)", rec.calls())
	}
}
