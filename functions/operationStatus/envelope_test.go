package operationstatus

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/functions/operationrequest"
	"github.com/hcpops/hcpops/internal/testsupport"
)

func readTestFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}

func postEnvelope(t *testing.T, ts *httptest.Server, body []byte) testsupport.Reply {
	t.Helper()
	return testsupport.PostInvocation(t, ts, Name, body, nil)
}

func TestEnvelopeGolden(t *testing.T) {
	want, _ := sampleStatus().MarshalIndent()
	for _, file := range []string{"envelope-request.json", "envelope-request-no-params.json"} {
		t.Run(file, func(t *testing.T) {
			rec := &recordingReader{out: sampleStatus()}
			ts := newServer(t, rec)
			body, err := readTestFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := postEnvelope(t, ts, body)
			if got.Status != http.StatusOK {
				t.Fatalf("status = %d error %q", got.Status, got.Error)
			}
			res := got.Outputs.Res
			if res.StatusCode != "200" || res.Body != string(want) || res.Headers["Content-Type"] != "application/json" {
				t.Errorf("res = %+v", res)
			}
			// A successful invocation's Logs would be logged twice by the host.
			if len(got.Logs) != 0 {
				t.Errorf("Logs = %q, want none on success", got.Logs)
			}
			wantReq := lifecycle.StatusRequest{SubscriptionID: sub, Location: "eastus", OperationName: opID, HomeTenantID: tenant, ClientObjectID: client}
			if rec.calls() != 1 || rec.reqs[0] != wantReq {
				t.Errorf("reader saw %+v, want %+v", rec.reqs, wantReq)
			}
		})
	}
}

// TestEnvelopeClientErrors: the invocation succeeds and the client's status
// travels in Outputs.res.
func TestEnvelopeClientErrors(t *testing.T) {
	tests := []struct {
		name       string
		req        string
		err        error
		wantStatus string
		wantBody   string
		wantCalled bool
	}{
		{"bad subscription id", `{"Method":"GET","Params":{"subscriptionId":"abc","location":"eastus","operationId":"` + opID + `"}}`, nil, "400", "'abc'", false},
		{"bad operation id", `{"Method":"GET","Params":{"subscriptionId":"` + sub + `","location":"eastus","operationId":"x"}}`, nil, "400", operationrequest.CodeInvalidResourceName, false},
		{"no route values at all", `{"Method":"GET","Url":"http://localhost/elsewhere"}`, nil, "400", operationrequest.CodeInvalidSubscriptionID, false},
		{"POST", `{"Method":"POST","Params":{"subscriptionId":"` + sub + `","location":"eastus","operationId":"` + opID + `"}}`, nil, "405", "'POST'", false},
		{"not visible", `{"Method":"GET","Params":{"subscriptionId":"` + sub + `","location":"eastus","operationId":"` + opID + `"}}`, lifecycle.ErrOperationNotVisible, "404", "", true},
		{"not found", `{"Method":"get","Params":{"subscriptionId":"` + sub + `","location":"eastus","operationId":"` + opID + `"}}`, lifecycle.ErrOperationNotFound, "404", "ResourceNotFound", true},
		{"failure", `{"Params":{"subscriptionId":"` + sub + `","location":"eastus","operationId":"` + opID + `"}}`, errors.New("down"), "500", "InternalServerError", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{out: sampleStatus(), err: tt.err}
			ts := newServer(t, rec)
			got := postEnvelope(t, ts, []byte(`{"Data":{"req":`+tt.req+`}}`))
			if got.Status != http.StatusOK {
				t.Fatalf("invocation status = %d (%s)", got.Status, got.Error)
			}
			res := got.Outputs.Res
			if res.StatusCode != tt.wantStatus {
				t.Errorf("res.statusCode = %s, want %s", res.StatusCode, tt.wantStatus)
			}
			if tt.wantBody == "" && (res.Body != "" || res.Headers != nil) {
				t.Errorf("want an empty body without headers, got %q %v", res.Body, res.Headers)
			}
			if !strings.Contains(res.Body, tt.wantBody) {
				t.Errorf("res.body = %q, want it to contain %q", res.Body, tt.wantBody)
			}
			if (rec.calls() > 0) != tt.wantCalled {
				t.Errorf("reader calls = %d", rec.calls())
			}
		})
	}
}

// TestEnvelopeMalformed: an unreadable Data.req fails the invocation (400)
// and reaches nothing.
func TestEnvelopeMalformed(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"no req", `{"Data":{"request":{}}}`, "Data.req is missing"},
		{"req is a string", `{"Data":{"req":"GET /"}}`, "Data.req is a string"},
		{"req is null", `{"Data":{"req":null}}`, "Data.req is null"},
		{"Method a number", `{"Data":{"req":{"Method":1}}}`, "Data.req.Method is a number"},
		{"Url an object", `{"Data":{"req":{"Url":{}}}}`, "Data.req.Url is an object"},
		{"Headers an array", `{"Data":{"req":{"Headers":["a"]}}}`, "Data.req.Headers is an array"},
		{"Params a string", `{"Data":{"req":{"Params":"x"}}}`, "Data.req.Params is a string"},
		{"Params with a number", `{"Data":{"req":{"Params":{"operationId":7}}}}`, "Data.req.Params must map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingReader{}
			ts := newServer(t, rec)
			got := postEnvelope(t, ts, []byte(tt.body))
			if got.Status != http.StatusBadRequest || !strings.Contains(got.Error, tt.want) {
				t.Errorf("status %d error %q, want 400 containing %q", got.Status, got.Error, tt.want)
			}
			if rec.calls() != 0 {
				t.Error("reader was called")
			}
		})
	}
}
