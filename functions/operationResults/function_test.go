package operationresults

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/handlers"
)

const (
	sub  = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	opID = "e2f8f733-dd90-49b0-8b2b-f390b42aa339"
)

// reader answers with a fixed result and records what reached it.
type reader struct {
	mu       sync.Mutex
	results  []armread.StatusRequest
	out      armread.Result
	err      error
	admitErr error
}

func (r *reader) Admit(_ context.Context, req armread.AdmitRequest) (string, error) {
	return req.HomeTenantID, r.admitErr
}

func (r *reader) Result(_ context.Context, req armread.StatusRequest) (armread.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, req)
	return r.out, r.err
}

func serve(t *testing.T, r ResultReader) *httptest.Server {
	t.Helper()
	s := handlers.New(handlers.Config{}, nil)
	if err := New(r, nil).Register(s); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func path(s, o string) string {
	return document.OperationResultID(s, "eastus", o) + "?api-version=2024-06-10-preview"
}

func TestRender(t *testing.T) {
	opIDPath := document.OperationID(sub, "westus", opID)
	for _, tc := range []struct {
		name   string
		out    armread.Result
		err    error
		status int
		body   string // substring; "" means no body
	}{
		{"running", armread.Result{Status: arm.ProvisioningStateProvisioning, OperationID: opIDPath, RetryAfter: 20 * time.Second}, nil, 202, ""},
		{"failed", armread.Result{Status: arm.ProvisioningStateFailed, Request: document.RequestCreate}, nil, 500, "InternalServerError"},
		{"failed, refused", armread.Result{Status: arm.ProvisioningStateFailed, Request: document.RequestCreate, Error: &arm.CloudErrorBody{
			Code: arm.CodeInvalidRequestContent, Message: "Clusters Service refused", Target: "properties.version",
			Details: []arm.CloudErrorBody{{Code: "OCM4010", Message: "bad version"}}}}, nil, 400, `"target": "properties.version"`},
		{"failed, CS's install", armread.Result{Status: arm.ProvisioningStateFailed, Request: document.RequestCreate, Error: &arm.CloudErrorBody{
			Code: "OCM3055", Message: "install failed"}}, nil, 500, `"code": "OCM3055"`},
		{"canceled", armread.Result{Status: arm.ProvisioningStateCanceled, Request: document.RequestUpdate}, nil, 409, `"code": "Canceled"`},
		{"create", armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestCreate, Body: []byte(`{"id":"x"}`)}, nil, 201, `{"id":"x"}`},
		{"update", armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestUpdate, Body: []byte(`{"id":"x"}`)}, nil, 200, `{"id":"x"}`},
		{"credential", armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestRequestCredential, Body: []byte(`{"kubeconfig":"k"}`)}, nil, 200, "kubeconfig"},
		{"delete", armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestDelete}, nil, 204, ""},
		{"revoke", armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestRevokeCredentials}, nil, 204, ""},
		{"not found", armread.Result{}, armread.ErrOperationNotFound, 404, "ResourceNotFound"},
		{"not visible", armread.Result{}, armread.ErrOperationNotVisible, 404, "ResourceNotFound"},
		{"gone", armread.Result{}, armread.ErrResultGone, 404, "no longer exists"},
		{"unsupported", armread.Result{}, armread.ErrResultUnsupported, 500, "InternalServerError"},
		{"store down", armread.Result{}, errors.New("boom"), 500, "InternalServerError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := serve(t, &reader{out: tc.out, err: tc.err})
			req, _ := http.NewRequest(http.MethodGet, ts.URL+path(sub, opID), nil)
			req.Header.Set("Referer", "https://management.azure.com"+path(sub, opID))
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || (tc.body == "") != (len(b) == 0) || !strings.Contains(string(b), tc.body) {
				t.Fatalf("%d %q, want %d with %q", resp.StatusCode, b, tc.status, tc.body)
			}
			wantErrorCode(t, resp, b)
			if tc.status == 202 {
				want := "https://management.azure.com" + document.OperationResultID(sub, "westus", opID) + "?api-version=2024-06-10-preview"
				if got := resp.Header.Get("Location"); got != want {
					t.Errorf("Location = %q, want %q (the operation's location)", got, want)
				}
				if got := resp.Header.Get("Retry-After"); got != "20" {
					t.Errorf("Retry-After = %q, want the read's 20 (seconds)", got)
				}
			}
		})
	}
}

func TestPathAndGate(t *testing.T) {
	rd := &reader{out: armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestDelete}}
	ts := serve(t, rd)
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{path("not-a-uuid", opID), 400, "InvalidSubscriptionId"},
		{path(sub, "x"), 400, "InvalidResourceName"},
		{"/api" + path(strings.ToUpper(sub), strings.ToUpper(opID)), 204, ""},
		{strings.Replace(path(sub, opID), "hcpOperationResults", "HCPOPERATIONRESULTS", 1), 204, ""},
	} {
		resp, err := ts.Client().Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.code != "" && !strings.Contains(string(b), tc.code)) {
			t.Errorf("%s: %d %s, want %d %s", tc.path, resp.StatusCode, b, tc.status, tc.code)
		}
		wantErrorCode(t, resp, b)
	}
	if got := rd.results[0]; got.APIVersion != "2024-06-10-preview" {
		t.Errorf("the read is asked at api-version %q, want the request's (a result is shown as that version shows it)", got.APIVersion)
	}
	if got := rd.results[0]; got.SubscriptionID != sub || got.OperationName != opID {
		t.Errorf("ids reach the lifecycle as %+v, want lower case", got)
	}
	// A refusal at the gate is the answer, and nothing is read.
	rd = &reader{admitErr: &admission.Rejection{Status: 400, Code: "InvalidParameter", Message: "The request is missing required parameter 'api-version'."}}
	ts = serve(t, rd)
	resp, err := ts.Client().Get(ts.URL + document.OperationResultID(sub, "eastus", opID))
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error arm.CloudErrorBody }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 400 || e.Error.Code != "InvalidParameter" || len(rd.results) != 0 {
		t.Errorf("gate refusal: %d %+v, reads %d", resp.StatusCode, e, len(rd.results))
	}
}

// TestLocationWithoutReferer: without ARM's Referer the Location of a
// running operation is on the host ARM reached.
func TestLocationWithoutReferer(t *testing.T) {
	rd := &reader{out: armread.Result{Status: arm.ProvisioningStateAccepted, OperationID: document.OperationID(sub, "eastus", opID)}}
	ts := serve(t, rd)
	req, _ := http.NewRequest(http.MethodGet, ts.URL+path(sub, opID), nil)
	req.Host = "hcpops.example.net"
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "https://hcpops.example.net" + document.OperationResultID(sub, "eastus", opID) + "?api-version=2024-06-10-preview"
	if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusAccepted || got != want {
		t.Errorf("%d Location %q, want 202 and %q", resp.StatusCode, got, want)
	}
	rd.out.OperationID = "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/" + opID // no location
	resp, err = ts.Client().Get(ts.URL + path(sub, opID))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("an operation id without its location: %d, want 500 (no Location to give)", resp.StatusCode)
	}
}

// TestIdentityHeaderConflict: the identity-header rule of operationStatus
// holds here too: any disagreement hides the operation, read or not.
func TestIdentityHeaderConflict(t *testing.T) {
	const tenantA, tenantB = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	for _, h := range []http.Header{
		{"X-Ms-Home-Tenant-Id": {tenantA, tenantB}},
		{"X-Ms-Client-Object-Id": {tenantA, tenantB}},
	} {
		rd := &reader{out: armread.Result{Status: arm.ProvisioningStateSucceeded, Request: document.RequestDelete}}
		ts := serve(t, rd)
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path(sub, opID), nil)
		req.Header = h
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || len(rd.results) != 0 {
			t.Errorf("headers %v: %d, reads %d; want 404 and no read", h, resp.StatusCode, len(rd.results))
		}
	}
}

// wantErrorCode: an error answer with a body names its code in
// X-Ms-Error-Code, as ARO-HCP's WriteCloudError does; any other answer
// carries none.
func wantErrorCode(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	got := resp.Header.Values("X-Ms-Error-Code")
	if resp.StatusCode < 400 || len(body) == 0 {
		if len(got) != 0 {
			t.Errorf("%d answer carries X-Ms-Error-Code %q", resp.StatusCode, got)
		}
		return
	}
	var e struct{ Error arm.CloudErrorBody }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	if len(got) != 1 || got[0] != e.Error.Code || got[0] == "" {
		t.Errorf("%d answer with code %q: X-Ms-Error-Code = %q", resp.StatusCode, e.Error.Code, got)
	}
}
