package operationstatus

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/functions/operationrequest"
	"github.com/hcpops/hcpops/handlers"
)

const (
	sub    = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	opID   = "e2f8f733-dd90-49b0-8b2b-f390b42aa339"
	tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	client = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
)

func statusPath(s, o string) string {
	return "/subscriptions/" + s + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + o
}

func sampleStatus() arm.OperationStatus {
	start := time.Date(2026, 3, 14, 1, 59, 26, 714826736, time.UTC)
	end := time.Date(2026, 3, 14, 2, 31, 2, 101010101, time.UTC)
	return arm.OperationStatus{
		ID:        "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + opID,
		Name:      opID,
		Status:    arm.ProvisioningStateFailed,
		StartTime: &start,
		EndTime:   &end,
		Error:     &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "[clusterServiceClusterStatus] boom"},
	}
}

// recordingReader records the requests that reached it.
type recordingReader struct {
	mu     sync.Mutex
	reqs   []armread.StatusRequest
	admits []armread.AdmitRequest
	out    arm.OperationStatus
	// retryAfter is what the read says of the next poll.
	retryAfter time.Duration
	err        error
	// admitErr refuses at the gate; tenant fills an empty home tenant.
	admitErr error
	tenant   string
}

func (r *recordingReader) Admit(ctx context.Context, req armread.AdmitRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.admits = append(r.admits, req)
	if r.admitErr != nil {
		return "", r.admitErr
	}
	if req.HomeTenantID == "" {
		return r.tenant, nil
	}
	return req.HomeTenantID, nil
}

func (r *recordingReader) Status(ctx context.Context, req armread.StatusRequest) (armread.OperationStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return armread.OperationStatus{OperationStatus: r.out, RetryAfter: r.retryAfter}, r.err
}

func (r *recordingReader) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func newServer(t *testing.T, r StatusReader) *httptest.Server {
	t.Helper()
	s := handlers.New(handlers.Config{}, nil)
	if err := New(r, nil).Register(s); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, ts *httptest.Server, method, path string, hdr map[string]string) httpReply {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Every ARM error answer names its code in X-Ms-Error-Code, as
	// ARO-HCP's WriteCloudError does.
	var e struct{ Error *arm.CloudErrorBody }
	if resp.StatusCode >= 400 && json.Unmarshal(b, &e) == nil && e.Error != nil {
		if got := resp.Header.Values("X-Ms-Error-Code"); len(got) != 1 || got[0] != e.Error.Code {
			t.Errorf("%s %s: %d with code %q, X-Ms-Error-Code = %q", method, path, resp.StatusCode, e.Error.Code, got)
		}
	} else if got := resp.Header.Get("X-Ms-Error-Code"); got != "" {
		t.Errorf("%s %s: %d without an ARM error carries X-Ms-Error-Code %q", method, path, resp.StatusCode, got)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

func armCode(t *testing.T, body []byte) (code, msg, target string) {
	t.Helper()
	var e struct{ Error arm.CloudErrorBody }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an ARM error body: %q", body)
	}
	return e.Error.Code, e.Error.Message, e.Error.Target
}

func TestForwardedStatus(t *testing.T) {
	want, _ := sampleStatus().MarshalIndent()
	tests := []struct {
		name, path string
	}{
		{"ARM path", statusPath(sub, opID)},
		{"api prefix", "/api" + statusPath(sub, opID)},
		{"lower-case words", "/subscriptions/" + sub + "/providers/microsoft.redhatopenshift/locations/eastus/hcpoperationstatuses/" + opID},
		{"upper-case ids", statusPath(strings.ToUpper(sub), strings.ToUpper(opID))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{out: sampleStatus()}
			ts := newServer(t, rec)
			got := get(t, ts, http.MethodGet, tt.path+"?api-version=2024-06-10-preview", map[string]string{
				operationrequest.HeaderHomeTenantID: tenant, operationrequest.HeaderClientObjectID: client, events.HeaderInvocationID: "fwd-1",
			})
			if got.status != http.StatusOK {
				t.Fatalf("status = %d body %s", got.status, got.body)
			}
			if ct := got.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if string(got.body) != string(want) {
				t.Errorf("body =\n%s\nwant\n%s", got.body, want)
			}
			if !strings.Contains(string(got.body), "\n    \"name\": ") {
				t.Errorf("body is not 4-space indented: %s", got.body)
			}
			wantReq := armread.StatusRequest{SubscriptionID: sub, Location: "eastus", OperationName: opID, HomeTenantID: tenant, ClientObjectID: client,
				APIVersion: "2024-06-10-preview"}
			if rec.calls() != 1 || rec.reqs[0] != wantReq {
				t.Errorf("reader saw %+v, want %+v", rec.reqs, wantReq)
			}
		})
	}
}

func TestForwardedErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{"not visible", armread.ErrOperationNotVisible, 404, "", ""},
		{"wrapped not visible", errors.Join(errors.New("visibility"), armread.ErrOperationNotVisible), 404, "", ""},
		{"not found", armread.ErrOperationNotFound, 404, arm.CodeResourceNotFound, "The operation '" + opID + "' was not found"},
		{"store failure", errors.New("cosmos: 503 secret-internal-detail"), 500, arm.CodeInternalServerError, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{err: tt.err}
			ts := newServer(t, rec)
			got := get(t, ts, http.MethodGet, statusPath(sub, opID), nil)
			if got.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d", got.status, tt.wantStatus)
			}
			if tt.wantCode == "" {
				if len(got.body) != 0 || got.header.Get("Content-Type") != "" {
					t.Errorf("want an empty body, got %q (Content-Type %q)", got.body, got.header.Get("Content-Type"))
				}
				return
			}
			code, msg, _ := armCode(t, got.body)
			if code != tt.wantCode || !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("error = %s %q", code, msg)
			}
			if strings.Contains(string(got.body), "secret-internal-detail") {
				t.Error("internal error detail leaked to the caller")
			}
		})
	}
}

// TestForwardedBadPaths: malformed ids are a 400 ARM error naming the
// value, and the reader is never called.
func TestForwardedBadPaths(t *testing.T) {
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantCode, wantIn   string
	}{
		{"subscription not a UUID", "GET", statusPath("not-a-subscription", opID), 400, operationrequest.CodeInvalidSubscriptionID, "'not-a-subscription'"},
		{"subscription without dashes", "GET", statusPath(strings.ReplaceAll(sub, "-", ""), opID), 400, operationrequest.CodeInvalidSubscriptionID, "1d3378d35a3f"},
		{"operation not a UUID", "GET", statusPath(sub, "op-123"), 400, operationrequest.CodeInvalidResourceName, "'op-123'"},
		{"operation in braces", "GET", statusPath(sub, "{"+opID+"}"), 400, operationrequest.CodeInvalidResourceName, opID},
		{"operation urn", "GET", statusPath(sub, "urn:uuid:"+opID), 400, operationrequest.CodeInvalidResourceName, "urn:uuid:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{out: sampleStatus()}
			ts := newServer(t, rec)
			got := get(t, ts, tt.method, tt.path, nil)
			if got.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d (%s)", got.status, tt.wantStatus, got.body)
			}
			code, msg, _ := armCode(t, got.body)
			if code != tt.wantCode || !strings.Contains(msg, tt.wantIn) {
				t.Errorf("error = %s %q, want %s naming %q", code, msg, tt.wantCode, tt.wantIn)
			}
			if rec.calls() != 0 {
				t.Error("reader was called")
			}
		})
	}
	t.Run("POST on the status path", func(t *testing.T) {
		rec := &recordingReader{}
		ts := newServer(t, rec)
		got := get(t, ts, http.MethodPost, statusPath(sub, opID), nil)
		if got.status != http.StatusMethodNotAllowed || rec.calls() != 0 {
			t.Errorf("status = %d calls = %d", got.status, rec.calls())
		}
	})
	t.Run("wrong resource type", func(t *testing.T) {
		rec := &recordingReader{}
		ts := newServer(t, rec)
		got := get(t, ts, http.MethodGet, strings.Replace(statusPath(sub, opID), "hcpOperationStatuses", "hcpOperationResults", 1), nil)
		if got.status != http.StatusNotFound || rec.calls() != 0 {
			t.Errorf("status = %d calls = %d", got.status, rec.calls())
		}
	})
}

func TestChiPatternMatchesFunctionJSONRoute(t *testing.T) {
	var fj struct {
		Bindings []struct {
			Type, Route string
			Methods     []string
		}
	}
	b, err := os.ReadFile("function.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fj); err != nil {
		t.Fatal(err)
	}
	if len(fj.Bindings) != 2 || fj.Bindings[0].Type != "httpTrigger" || fj.Bindings[1].Type != "http" {
		t.Fatalf("function.json must be exactly httpTrigger in + http out for forwarding: %+v", fj.Bindings)
	}
	if want := operationrequest.Route(arm.OperationStatusesType); fj.Bindings[0].Route != want {
		t.Errorf("function.json route %q != %q", fj.Bindings[0].Route, want)
	}
	if len(fj.Bindings[0].Methods) != 1 || fj.Bindings[0].Methods[0] != "get" {
		t.Errorf("methods = %v", fj.Bindings[0].Methods)
	}
}

// TestGatesRunFirst: a refusal at the gate is ARM's answer and the
// operation is never read; the api-version and the tenant filled from the
// subscription reach the gate and the read.
func TestGatesRunFirst(t *testing.T) {
	rej := &admission.Rejection{Status: 409, Code: "InvalidSubscriptionState", Message: "Request is not allowed in subscription in state 'Warned'."}
	rec := &recordingReader{admitErr: rej}
	ts := newServer(t, rec)
	r := get(t, ts, http.MethodGet, statusPath(sub, opID)+"?api-version=2024-06-10-preview", nil)
	if code, msg, _ := armCode(t, r.body); r.status != 409 || code != rej.Code || msg != rej.Message {
		t.Fatalf("refused: %d %s", r.status, r.body)
	}
	if rec.calls() != 0 || len(rec.admits) != 1 || rec.admits[0].APIVersion != "2024-06-10-preview" || rec.admits[0].SubscriptionID != sub {
		t.Fatalf("reads %d, admits %+v", rec.calls(), rec.admits)
	}

	rec = &recordingReader{out: sampleStatus(), tenant: tenant}
	ts = newServer(t, rec)
	if r := get(t, ts, http.MethodGet, statusPath(sub, opID)+"?api-version=2024-06-10-preview", nil); r.status != 200 {
		t.Fatalf("admitted: %d %s", r.status, r.body)
	}
	if rec.reqs[0].HomeTenantID != tenant {
		t.Errorf("the read saw home tenant %q, want the subscription's %s", rec.reqs[0].HomeTenantID, tenant)
	}

	rec = &recordingReader{admitErr: errors.New("cosmos unavailable")}
	ts = newServer(t, rec)
	if r := get(t, ts, http.MethodGet, statusPath(sub, opID)+"?api-version=x", nil); r.status != 500 || rec.calls() != 0 {
		t.Fatalf("gate failure: %d %s, reads %d", r.status, r.body, rec.calls())
	}
}

// TestRetryAfterHeader: the read's wait reaches ARM as whole seconds on a
// running operation's 200; a terminal one (no wait) gets none.
func TestRetryAfterHeader(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{{40 * time.Second, "40"}, {0, ""}} {
		out := sampleStatus()
		rec := &recordingReader{out: out, retryAfter: tc.wait}
		ts := newServer(t, rec)
		got := get(t, ts, http.MethodGet, statusPath(sub, opID)+"?api-version=2024-06-10-preview", map[string]string{
			operationrequest.HeaderHomeTenantID: tenant, operationrequest.HeaderClientObjectID: client})
		if got.status != http.StatusOK || got.header.Get("Retry-After") != tc.want {
			t.Errorf("wait %s: %d Retry-After %q, want 200 and %q", tc.wait, got.status, got.header.Get("Retry-After"), tc.want)
		}
	}
}
