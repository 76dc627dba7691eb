package functions

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const statusPath = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/"

// TestMalformedInputNeverReachesTheEngine: every kind of bad request gets a
// 4xx whose body names what is wrong, and the engine sees nothing.
func TestMalformedInputNeverReachesTheEngine(t *testing.T) {
	const limit = 64 << 10
	huge := `{"Data":{"documents":"[` + strings.Repeat(`{\"id\":\"x\"},`, limit/10) + `{}]"}}`
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantIn                   string // in the body's Error or ARM error message
	}{
		{"not JSON", "POST", "/dispatchOperations", `<documents/>`, 400, "not valid JSON"},
		{"empty body", "POST", "/pollOperations", ``, 400, "body is empty"},
		{"body is an array", "POST", "/dispatchOperations", `[]`, 400, "got array"},
		{"missing Data", "POST", "/dispatchOperations", `{"Metadata":{"sys":{}}}`, 400, "no Data object"},
		{"Data is a string", "POST", "/pollOperations", `{"Data":"timer"}`, 400, "Data must be a JSON object"},
		{"Metadata is a number", "POST", "/dispatchOperations", `{"Data":{"documents":[]},"Metadata":5}`, 400, "Metadata must be a JSON object"},
		{"documents missing", "POST", "/dispatchOperations", `{"Data":{"items":[]}}`, 400, "Data.documents is missing"},
		{"documents a number", "POST", "/dispatchOperations", `{"Data":{"documents":3}}`, 400, "Data.documents is a number"},
		{"documents an object", "POST", "/dispatchOperations", `{"Data":{"documents":{"id":"a"}}}`, 400, "Data.documents is an object"},
		{"documents string not JSON", "POST", "/dispatchOperations", `{"Data":{"documents":"\"[{oops\""}}`, 400, "content is not JSON"},
		{"element not an object", "POST", "/dispatchOperations", `{"Data":{"documents":"\"[{},42]\""}}`, 400, "Data.documents[1] is a number"},
		{"huge body", "POST", "/pollOperations", huge, 413, "exceeds the limit of 65536 bytes"},
		{"huge change-feed body of garbage", "POST", "/dispatchOperations", `{"Data":{"documents":"` + strings.Repeat("x", limit) + `"}}`, 400, "not an array of documents"},
		{"unknown function", "POST", "/dispatchOperation", `{"Data":{}}`, 404, `no function named \"dispatchOperation\"`},
		{"GET on an invocation path", "GET", "/pollOperations", ``, 405, "invoked with POST"},
		{"timer is a string", "POST", "/pollOperations", `{"Data":{"timer":"tick"}}`, 400, "Data.timer is a string"},
		{"timer IsPastDue wrong type", "POST", "/pollOperations", `{"Data":{"timer":{"IsPastDue":"no"}}}`, 400, "Data.timer.IsPastDue is a string"},
		{"timer Last not a time", "POST", "/pollOperations", `{"Data":{"timer":{"ScheduleStatus":{"Last":"noon"}}}}`, 400, "Data.timer.ScheduleStatus.Last"},
		{"bad subscription id", "GET", "/subscriptions/my-sub/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/e2f8f733-dd90-49b0-8b2b-f390b42aa339", ``, 400, "subscription id 'my-sub'"},
		{"bad operation id", "GET", statusPath + "12345", ``, 400, "operation id '12345'"},
		{"bad operation id under /api", "GET", "/api" + statusPath + "not-a-uuid", ``, 400, "operation id 'not-a-uuid'"},
		{"an invocation of a forwarded function", "POST", "/operationStatus", `{"Data":{"req":{}}}`, 404, "the host forwards (host.json enableForwardingHttpRequest)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := &recordingEngine{}
			ts := newServer(t, eng, limit)
			req, _ := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, tt.wantStatus, raw)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var body struct {
				Error any
				Logs  []string
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("body is not JSON: %q", raw)
			}
			if !strings.Contains(string(raw), tt.wantIn) {
				t.Errorf("body %s does not say %q", raw, tt.wantIn)
			}
			if eng.total() != 0 {
				t.Errorf("the engine was called %d times", eng.total())
			}
		})
	}
	if len(tests) < 15 {
		t.Fatalf("only %d kinds of malformed input", len(tests))
	}
}
