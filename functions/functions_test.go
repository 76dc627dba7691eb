package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/functions/operationrequest"
	polloperations "github.com/hcpops/hcpops/functions/pollOperations"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/logging"
)

// recordingEngine records every call that reaches the lifecycle.
type recordingEngine struct {
	mu       sync.Mutex
	docs     [][]json.RawMessage
	ticks    int
	statuses []armread.StatusRequest
	ids      []string // handlers.InvocationID seen by each call
}

func (e *recordingEngine) DispatchDocuments(ctx context.Context, docs []json.RawMessage) (lifecycle.DispatchResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.docs = append(e.docs, docs)
	e.ids = append(e.ids, logging.InvocationID(ctx))
	return lifecycle.DispatchResult{Documents: len(docs)}, nil
}

func (e *recordingEngine) Tick(ctx context.Context) (lifecycle.TickResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ticks++
	e.ids = append(e.ids, logging.InvocationID(ctx))
	return lifecycle.TickResult{Polled: 1}, nil
}

func (e *recordingEngine) Status(ctx context.Context, req armread.StatusRequest) (armread.OperationStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.statuses = append(e.statuses, req)
	e.ids = append(e.ids, logging.InvocationID(ctx))
	return armread.OperationStatus{OperationStatus: arm.OperationStatus{ID: "x", Name: req.OperationName, Status: arm.ProvisioningStateSucceeded}}, nil
}

func (e *recordingEngine) Result(ctx context.Context, req armread.StatusRequest) (armread.Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.statuses = append(e.statuses, req)
	e.ids = append(e.ids, logging.InvocationID(ctx))
	return armread.Result{Status: arm.ProvisioningStateSucceeded, Request: "Delete"}, nil
}

func (e *recordingEngine) Admit(ctx context.Context, req armread.AdmitRequest) (string, error) {
	return req.HomeTenantID, nil
}

func (e *recordingEngine) total() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.docs) + e.ticks + len(e.statuses)
}

func newServer(t *testing.T, eng Backend, maxBody int64) *httptest.Server {
	t.Helper()
	s := handlers.New(handlers.Config{MaxBodyBytes: maxBody}, nil)
	if err := Register(s, eng, Config{}, nil); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestFoldersAreTheFunctions: the folders holding function.json (what the
// host and the Makefile see) are exactly the functions the server serves.
func TestFoldersAreTheFunctions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("*", "function.json"))
	if err != nil {
		t.Fatal(err)
	}
	var folders []string
	for _, f := range files {
		folders = append(folders, filepath.Dir(f))
	}
	slices.Sort(folders)
	ts := newServer(t, &recordingEngine{}, 0)
	resp, err := ts.Client().Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct{ Functions []string }
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		t.Fatal(err)
	}
	if len(folders) != 4 || !slices.Equal(health.Functions, folders) {
		t.Errorf("server serves %v, the folders with function.json are %v", health.Functions, folders)
	}
}

type binding map[string]any

type functionJSON struct {
	Bindings []binding      `json:"bindings"`
	Retry    map[string]any `json:"retry"`
}

func TestFunctionJSON(t *testing.T) {
	var d functionJSON
	readJSON(t, "dispatchOperations/function.json", &d)
	wantCosmos := binding{
		"type": "cosmosDBTrigger", "direction": "in", "name": "documents", "connection": "CosmosDB",
		"databaseName": "%COSMOS_DATABASE%", "containerName": "Resources", "leaseContainerName": "leases",
		"createLeaseContainerIfNotExists": false, "maxItemsPerInvocation": float64(100),
	}
	checkBinding(t, "dispatchOperations", d.Bindings, wantCosmos)
	if _, set := d.Bindings[0]["dataType"]; set {
		t.Error("dispatchOperations: dataType must not be set (the host's default string is what the decoder expects)")
	}
	if d.Retry["strategy"] != "exponentialBackoff" {
		t.Errorf("dispatchOperations retry strategy = %v", d.Retry["strategy"])
	}
	if n, _ := d.Retry["maxRetryCount"].(float64); n < 1 || n > 10 {
		t.Errorf("dispatchOperations maxRetryCount = %v, want a bounded positive count", d.Retry["maxRetryCount"])
	}
	for _, k := range []string{"minimumInterval", "maximumInterval"} {
		if _, err := parseTimeSpan(d.Retry[k]); err != nil {
			t.Errorf("dispatchOperations retry %s: %v", k, err)
		}
	}

	var p functionJSON
	readJSON(t, "pollOperations/function.json", &p)
	checkBinding(t, "pollOperations", p.Bindings, binding{
		"type": "timerTrigger", "direction": "in", "name": "timer", "schedule": "*/10 * * * * *",
		"useMonitor": true, "runOnStartup": false,
	})

	var s functionJSON
	readJSON(t, "operationStatus/function.json", &s)
	if len(s.Bindings) != 2 || s.Bindings[1]["type"] != "http" || s.Bindings[1]["direction"] != "out" {
		t.Errorf("operationStatus: want exactly httpTrigger in + http out (forwarding needs it): %v", s.Bindings)
	}
	checkBinding(t, "operationStatus", s.Bindings[:1], binding{
		"type": "httpTrigger", "direction": "in", "name": "req",
		"route": "subscriptions/{subscriptionId}/providers/Microsoft.RedHatOpenShift/locations/{location}/hcpOperationStatuses/{operationId}",
	})
}

// TestHTTPFunctionsAreForwarded: the handler serves HTTP functions on
// their routes only, which holds because the host forwards every one of
// them: host.json enables forwarding (TestHostJSON), and forwarding
// applies to a function whose bindings are exactly one httpTrigger in and
// one http out. A function with more would reach the handler as an
// invocation, which it answers 404.
func TestHTTPFunctionsAreForwarded(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("*", "function.json"))
	if err != nil {
		t.Fatal(err)
	}
	http := 0
	for _, f := range files {
		var fj functionJSON
		readJSON(t, f, &fj)
		var trigger, out int
		for _, b := range fj.Bindings {
			switch {
			case b["type"] == "httpTrigger" && b["direction"] == "in":
				trigger++
			case b["type"] == "http" && b["direction"] == "out":
				out++
			}
		}
		if trigger == 0 {
			continue
		}
		http++
		if trigger != 1 || out != 1 || len(fj.Bindings) != 2 {
			t.Errorf("%s: an HTTP function needs exactly one httpTrigger in and one http out for the host to forward it; has %v", f, fj.Bindings)
		}
		types := map[string]string{"operationStatus": arm.OperationStatusesType, "operationResults": arm.OperationResultsType}
		if want := operationrequest.Route(types[filepath.Dir(f)]); fj.Bindings[0]["route"] != want {
			t.Errorf("%s: route %v, want %s (the path the handler serves)", f, fj.Bindings[0]["route"], want)
		}
	}
	if http != 2 {
		t.Errorf("%d HTTP functions, want 2 (operationStatus, operationResults)", http)
	}
}

func checkBinding(t *testing.T, fn string, got []binding, want binding) {
	t.Helper()
	if len(got) < 1 {
		t.Fatalf("%s: no bindings", fn)
	}
	for k, v := range want {
		if got[0][k] != v {
			t.Errorf("%s: binding %s = %v, want %v", fn, k, got[0][k], v)
		}
	}
}

// parseTimeSpan reads the hh:mm:ss form host.json and retry policies use.
func parseTimeSpan(v any) (time.Duration, error) {
	s, _ := v.(string)
	var h, m, sec int
	if n, err := fmt.Sscanf(s, "%d:%d:%d", &h, &m, &sec); err != nil || n != 3 {
		return 0, fmt.Errorf("%q is not hh:mm:ss", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second, nil
}

func TestHostJSON(t *testing.T) {
	var h struct {
		Version         string
		ExtensionBundle struct{ ID, Version string }
		CustomHandler   struct {
			Description struct {
				DefaultExecutablePath string
				Arguments             []string
			}
			EnableForwardingHTTPRequest bool `json:"enableForwardingHttpRequest"`
		}
		FunctionTimeout string
		Extensions      struct {
			HTTP struct {
				RoutePrefix *string `json:"routePrefix"`
			} `json:"http"`
		}
		Logging struct{ LogLevel map[string]string }
	}
	readJSON(t, "../host.json", &h)
	if h.Version != "2.0" || h.ExtensionBundle.ID != "Microsoft.Azure.Functions.ExtensionBundle" || h.ExtensionBundle.Version != "[4.*, 5.0.0)" {
		t.Errorf("version/bundle = %q %+v", h.Version, h.ExtensionBundle)
	}
	d := h.CustomHandler.Description
	if d.DefaultExecutablePath != "hcpops" || !slices.Equal(d.Arguments, []string{"serve"}) {
		t.Errorf("customHandler.description = %+v", d)
	}
	if !h.CustomHandler.EnableForwardingHTTPRequest {
		t.Error("enableForwardingHttpRequest must be true: operationStatus is served by forwarding")
	}
	if h.Extensions.HTTP.RoutePrefix == nil || *h.Extensions.HTTP.RoutePrefix != "" {
		t.Error(`extensions.http.routePrefix must be "" so forwarded paths are ARM's own`)
	}
	timeout, err := parseTimeSpan(h.FunctionTimeout)
	if err != nil {
		t.Fatalf("functionTimeout %q: %v", h.FunctionTimeout, err)
	}
	if timeout < polloperations.DefaultBudget+30*time.Second {
		t.Errorf("functionTimeout %v leaves too little room above the poll budget %v", timeout, polloperations.DefaultBudget)
	}
	if h.Logging.LogLevel["default"] == "" {
		t.Error("logging.logLevel.default is not set")
	}
}

func TestLocalSettings(t *testing.T) {
	var ls struct {
		IsEncrypted bool
		Values      map[string]json.RawMessage
	}
	readJSON(t, "../local.settings.json", &ls)
	for k, v := range ls.Values {
		if events.Kind(v) != "string" {
			t.Errorf("Values.%s is %s; local settings must be strings", k, events.Describe(v))
		}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(ls.Values[k], &s)
		return s
	}
	if str("FUNCTIONS_WORKER_RUNTIME") != "custom" || str("AzureWebJobsStorage") != "UseDevelopmentStorage=true" {
		t.Error("FUNCTIONS_WORKER_RUNTIME must be custom and AzureWebJobsStorage the emulator")
	}
	for _, k := range []string{"COSMOS_DATABASE", "CLUSTERS_SERVICE_URL", "HCPOPS_DATA_DIR", EnvPollBudget} {
		if str(k) == "" {
			t.Errorf("Values.%s is missing", k)
		}
	}
	// hcpopsctl dev reads this file too, and a Cosmos connection in it would
	// take make run off the embedded store; func start users add theirs.
	for _, k := range []string{"CosmosDB", "CosmosDB__accountEndpoint"} {
		if _, ok := ls.Values[k]; ok {
			t.Errorf("Values.%s is set: make run (hcpopsctl dev) would run on that Cosmos DB account", k)
		}
	}
	if _, err := ConfigFromEnv(str); err != nil {
		t.Errorf("local.settings.json does not load: %v", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		v       string
		want    time.Duration
		wantErr bool
	}{{"", 0, false}, {"90s", 90 * time.Second, false}, {"4m", 4 * time.Minute, false}, {"soon", 0, true}, {"-1m", 0, true}, {"0s", 0, true}}
	for _, tt := range tests {
		cfg, err := ConfigFromEnv(func(k string) string {
			if k == EnvPollBudget {
				return tt.v
			}
			return ""
		})
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), EnvPollBudget) || !strings.Contains(err.Error(), tt.v) {
				t.Errorf("%q: err = %v, want one naming the setting and value", tt.v, err)
			}
			continue
		}
		if err != nil || cfg.PollBudget != tt.want {
			t.Errorf("%q: %v, %v", tt.v, cfg.PollBudget, err)
		}
	}
}

func TestRegisterErrors(t *testing.T) {
	s := handlers.New(handlers.Config{}, nil)
	if err := Register(s, nil, Config{}, nil); err == nil {
		t.Error("nil backend accepted")
	}
	if err := Register(s, &recordingEngine{}, Config{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := Register(s, &recordingEngine{}, Config{}, nil); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("second registration: %v", err)
	}
}

// TestGoldenPayloads posts every trigger payload of events/testdata to the
// combined server and checks each reached the right engine entry point.
func TestGoldenPayloads(t *testing.T) {
	eng := &recordingEngine{}
	ts := newServer(t, eng, 0)
	posts := map[string]string{
		"batch-double-encoded.json":   "dispatchOperations",
		"batch-single-encoded.json":   "dispatchOperations",
		"batch-plain-array.json":      "dispatchOperations",
		"batch-retry.json":            "dispatchOperations",
		"reference-cosmos-batch.json": "dispatchOperations",
		"tick.json":                   "pollOperations",
		"tick-first-run-legacy.json":  "pollOperations",
		"tick-no-monitor.json":        "pollOperations",
		"tick-past-due.json":          "pollOperations",
	}
	for file, fn := range posts {
		body, err := os.ReadFile(filepath.Join("..", "events", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ts.Client().Post(ts.URL+"/"+fn, "application/json; charset=utf-8", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", file, resp.StatusCode, raw)
		}
	}
	resp, err := ts.Client().Get(ts.URL + "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/e2f8f733-dd90-49b0-8b2b-f390b42aa339")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("forwarded GET: %d", resp.StatusCode)
	}
	if len(eng.docs) != 5 || eng.ticks != 4 || len(eng.statuses) != 1 {
		t.Errorf("engine saw %d batches, %d ticks, %d status reads; want 5, 4, 1", len(eng.docs), eng.ticks, len(eng.statuses))
	}
	for i, b := range eng.docs {
		if len(b) != 3 && len(b) != 2 {
			t.Errorf("batch %d has %d documents", i, len(b))
		}
	}
}

// TestDeployTemplateMatchesBindings guards the names the Bicep template
// must share with function.json and the store (it cannot be compiled here).
func TestDeployTemplateMatchesBindings(t *testing.T) {
	b, err := os.ReadFile("../deploy/main.bicep")
	if err != nil {
		t.Fatal(err)
	}
	bicep := string(b)
	for _, want := range []string{
		"FUNCTIONS_WORKER_RUNTIME: 'custom'",
		"CosmosDB__accountEndpoint: cosmos.properties.documentEndpoint",
		"CosmosDB__credential: 'managedidentity'",
		"CosmosDB__clientId: identity.properties.clientId",
		"COSMOS_DATABASE: cosmosDatabaseName",
		"CLUSTERS_SERVICE_URL: clustersServiceUrl",
		"AzureWebJobsStorage__accountName: storage.name",
		EnvPollBudget + ": pollBudget",
		"name: 'Resources'", "'/partitionKey'", "defaultTtl: -1",
		"name: 'leases'", "'/id'",
		"sqlRoleDefinitions/${cosmosBuiltInDataContributor}",
		"'00000000-0000-0000-0000-000000000002'",
		"kind: 'functionapp,linux'",
	} {
		if !strings.Contains(bicep, want) {
			t.Errorf("deploy/main.bicep lacks %q", want)
		}
	}
}

// The real engine and read service must keep fitting the adapters'
// interfaces.
var _ Backend = struct {
	*lifecycle.Engine
	*armread.ReadService
}{}

// TestInvocationIDReachesLifecycle: the lifecycle's log lines can only name
// the host's invocation if the id crosses from the transport into core.
func TestInvocationIDReachesLifecycle(t *testing.T) {
	eng := &recordingEngine{}
	ts := newServer(t, eng, 0)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/pollOperations", strings.NewReader(`{"Data":{"timer":{"Schedule":{"AdjustForDST":true},"ScheduleStatus":null,"IsPastDue":false}},"Metadata":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(events.HeaderInvocationID, "3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	if len(eng.ids) != 1 || eng.ids[0] != "3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20" {
		t.Fatalf("lifecycle saw invocation ids %q", eng.ids)
	}
}
