package operationstatus

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestIdentityHeaders: identity headers match case-insensitively, and
// conflicting values of one header hide the operation every time, in
// whatever spelling and order they come.
func TestIdentityHeaders(t *testing.T) {
	const other = "00000000-0000-0000-0000-000000000000"
	type header struct{ name, value string }
	tests := []struct {
		name       string
		headers    []header // sent as written, in this order
		wantStatus int
		wantTenant string
	}{
		{"lower-case spelling", []header{{"x-ms-home-tenant-id", tenant}}, 200, tenant},
		{"two spellings, one value", []header{{"x-ms-home-tenant-id", tenant}, {"X-Ms-Home-Tenant-Id", tenant}}, 200, tenant},
		{"values differ only in case", []header{{"x-ms-home-tenant-id", tenant}, {"X-MS-HOME-TENANT-ID", strings.ToUpper(tenant)}}, 200, tenant},
		{"two spellings, two values", []header{{"x-ms-home-tenant-id", tenant}, {"X-Ms-Home-Tenant-Id", other}}, 404, ""},
		{"two values, the other first", []header{{"X-Ms-Home-Tenant-Id", other}, {"X-Ms-Home-Tenant-Id", tenant}}, 404, ""},
		{"client object id conflict", []header{{"X-Ms-Home-Tenant-Id", tenant}, {"x-ms-client-object-id", client}, {"X-MS-CLIENT-OBJECT-ID", other}}, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{out: sampleStatus()}
			ts := newServer(t, rec)
			req, _ := http.NewRequest(http.MethodGet, ts.URL+statusPath(sub, opID), nil)
			for _, h := range tt.headers {
				req.Header[h.name] = append(req.Header[h.name], h.value)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantStatus == 404 {
				if len(body) != 0 || rec.calls() != 0 {
					t.Fatalf("hidden operation: body %q, %d reads; want none", body, rec.calls())
				}
				return
			}
			for _, r := range rec.reqs {
				if !strings.EqualFold(r.HomeTenantID, tt.wantTenant) {
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
