package triggerhost

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	operationstatus "github.com/hcpops/hcpops/functions/operationStatus"
	"github.com/hcpops/hcpops/handlers"
)

const noForwardingHost = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"hcpops"},"enableForwardingHttpRequest":false},"extensions":{"http":{"routePrefix":""}}}`

func TestEnvelopeCarriesTheRequestAndAnswersFromOutputs(t *testing.T) {
	app := writeApp(t, noForwardingHost, map[string]string{"operationStatus": statusFunction})
	th := newTestHandler()
	th.setRespond(func(recorded) (int, string) {
		return 200, `{"Outputs":{"res":{"statusCode":"404","headers":{"Content-Type":"application/json"},"body":"{\"error\":{\"code\":\"NotFound\"}}"}},"Logs":[],"ReturnValue":null}`
	})
	h := startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), HTTPAddr: "127.0.0.1:0"})

	path := "/subscriptions/SUB/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/op-1"
	req, _ := http.NewRequest(http.MethodGet, h.FrontURL()+path+"?api-version=v1", nil)
	req.Header.Set("X-Ms-Home-Tenant-Id", "tenant-1")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || string(body) != `{"error":{"code":"NotFound"}}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("client got %d %q %v, want the 404 from Outputs.res", resp.StatusCode, body, resp.Header)
	}

	got := th.next(t)
	if got.Method != http.MethodPost || got.Path != "/operationStatus" {
		t.Fatalf("handler got %s %s, want POST /operationStatus", got.Method, got.Path)
	}
	data, meta := got.envelope(t)
	var hr struct {
		URL     string `json:"Url"`
		Method  string
		Query   map[string]string
		Headers map[string][]string
		Params  map[string]string
	}
	must(t, json.Unmarshal(data["req"], &hr))
	if hr.Method != "GET" || hr.URL != h.FrontURL()+path+"?api-version=v1" || hr.Query["api-version"] != "v1" ||
		hr.Params["operationId"] != "op-1" || hr.Params["subscriptionId"] != "SUB" || hr.Headers["X-Ms-Home-Tenant-Id"][0] != "tenant-1" {
		t.Errorf("Data.req = %s", data["req"])
	}
	if string(meta["location"]) != `"\"eastus\""` {
		t.Errorf("Metadata.location = %s, want a JSON-quoted string", meta["location"])
	}
	var q string
	if json.Unmarshal(meta["Query"], &q) != nil || q != `{"api-version":"v1"}` {
		t.Errorf("Metadata.Query = %s", meta["Query"])
	}
}

type fixedStatus struct{}

func (fixedStatus) Admit(_ context.Context, r armread.AdmitRequest) (string, error) {
	return r.HomeTenantID, nil
}

func (fixedStatus) Status(_ context.Context, r armread.StatusRequest) (armread.OperationStatus, error) {
	if r.HomeTenantID != "tenant-1" {
		return armread.OperationStatus{}, armread.ErrOperationNotVisible
	}
	return armread.OperationStatus{OperationStatus: arm.OperationStatus{ID: r.Location + "/" + r.OperationName, Name: r.OperationName, Status: arm.ProvisioningStateSucceeded}}, nil
}

// The project's own operationStatus function answers through this host
// when it forwards, as host.json has it; with forwarding off the handler
// refuses the envelope, and the caller sees the function fail rather than
// an answer made without the caller check.
func TestStatusFunctionAnswersThroughTheHost(t *testing.T) {
	for _, host := range []string{noForwardingHost, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"hcpops"},"enableForwardingHttpRequest":true},"extensions":{"http":{"routePrefix":""}}}`} {
		app := writeApp(t, host, map[string]string{"operationStatus": statusFunction})
		worker := WorkerFunc(func(ctx context.Context, port int) error {
			srv := handlers.New(handlers.Config{Port: port}, nil)
			if err := operationstatus.New(fixedStatus{}, nil).Register(srv); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				return err
			}
			return srv.Serve(ctx, ln)
		})
		h := startHost(t, Config{App: app, Worker: worker, StateDir: t.TempDir(), HTTPAddr: "127.0.0.1:0"})
		for _, tc := range []struct {
			tenant string
			status int
		}{{"tenant-1", 200}, {"someone-else", 404}} {
			req, _ := http.NewRequest(http.MethodGet, h.FrontURL()+
				"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/e2f8f733-dd90-49b0-8b2b-f390b42aa339", nil)
			req.Header.Set("X-Ms-Home-Tenant-Id", tc.tenant)
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !app.Host.CustomHandler.EnableForwardingHTTPRequest {
				if resp.StatusCode != http.StatusInternalServerError {
					t.Errorf("forwarding off, tenant %s: %d %s, want the host's 500 for a failed function", tc.tenant, resp.StatusCode, body)
				}
				continue
			}
			if resp.StatusCode != tc.status {
				t.Errorf("forwarding %v, tenant %s: %d %s, want %d", app.Host.CustomHandler.EnableForwardingHTTPRequest, tc.tenant, resp.StatusCode, body, tc.status)
				continue
			}
			var st arm.OperationStatus
			if tc.status == 200 && (json.Unmarshal(body, &st) != nil || st.Status != arm.ProvisioningStateSucceeded || st.Name != "e2f8f733-dd90-49b0-8b2b-f390b42aa339") {
				t.Errorf("status body %s", body)
			}
		}
	}
}
