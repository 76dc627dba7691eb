package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/hcpops/hcpops/app"

	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/auth"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/simulator/simtest"
	"github.com/hcpops/hcpops/harness/testsupport"
	"github.com/hcpops/hcpops/logging"
)

var update = flag.Bool("update", false, "rewrite the golden host payloads in testdata/")

const (
	sub       = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	clusterID = "/subscriptions/" + sub + "/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"
	opName    = "e2f8f733-dd90-49b0-8b2b-f390b42aa339"
	tenant    = "72f988bf-86f1-41af-91ab-2d7cd011db47"
)

// sink is ARM's notification endpoint, on loopback.
type sink struct {
	mu   sync.Mutex
	got  []arm.OperationStatus
	srv  *httptest.Server
	fail int // answer this many more requests with 500
}

// failFirst makes the next n notifications fail with a 500.
func (s *sink) failFirst(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var st arm.OperationStatus
		_ = json.NewDecoder(r.Body).Decode(&st)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail > 0 {
			s.fail--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		s.got = append(s.got, st)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// rig is the production assembly (app.New from settings: embedded store,
// ocm client, notifier, engine) behind the real handler on loopback.
type rig struct {
	t       *testing.T
	app     *app.App
	sim     *simulator.Simulator
	handler *httptest.Server
	sink    *sink
	logs    *recordLog
	// clock is the app's (Parts.Clock); nil is the wall clock.
	clock clock.Clock
}

// recordLog collects the JSON lines the production logger writes, both
// streams in one, in order.
type recordLog struct {
	testsupport.Buffer
}

// records returns every line decoded, in order.
func (l *recordLog) records(t *testing.T) []map[string]any {
	t.Helper()
	return decodeLines(t, l.String())
}

func decodeLines(t *testing.T, written string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(written), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// named waits (the invocation's line is written as its response goes
// out) until at least n records named msg were written.
func (l *recordLog) named(t *testing.T, msg string, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	l.Await(t, fmt.Sprintf("%d %q records", n, msg), func(written string) bool {
		got = got[:0]
		for _, r := range decodeLines(t, written) {
			if r["msg"] == msg {
				got = append(got, r)
			}
		}
		return len(got) >= n
	})
	return got
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newRigWith(t, nil)
}

// newRigWith is newRig with settings changed by override, which is given
// the simulator's URL.
func newRigWith(t *testing.T, override func(simURL string) map[string]string) *rig {
	t.Helper()
	return newRigEnv(t, override, app.Parts{})
}

// withSettings is an override that ignores the simulator's URL.
func withSettings(m map[string]string) func(string) map[string]string {
	return func(string) map[string]string { return m }
}

// armAppID is the application the rig's callers authenticate as: a made-up
// id standing for ARM's, allowed by HCPOPS_ARM_CLIENT_APP_IDS.
const armAppID = "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"

// principal is the X-MS-CLIENT-PRINCIPAL header App Service Authentication
// would inject for a token of application appID.
func principal(appID string) string {
	b, _ := json.Marshal(map[string]any{"auth_typ": "aad", "claims": []map[string]string{
		{"typ": "aud", "val": "api://hcpops"}, {"typ": "appid", "val": appID}}})
	return base64.StdEncoding.EncodeToString(b)
}

// asARM adds ARM's principal to requests that carry none, as App Service
// Authentication does in front of the real host.
type asARM struct{ base http.RoundTripper }

func (a asARM) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, ok := r.Header[http.CanonicalHeaderKey(auth.HeaderClientPrincipal)]; !ok {
		r = r.Clone(r.Context())
		r.Header.Set(auth.HeaderClientPrincipal, principal(armAppID))
	}
	return a.base.RoundTrip(r)
}

// newRigEnv is newRigWith with parts supplied.
func newRigEnv(t *testing.T, override func(simURL string) map[string]string, parts app.Parts) *rig {
	t.Helper()
	return newRigParts(t, override, nil, parts)
}

// newRigFull is newRigWith with the app logging to logger.
func newRigFull(t *testing.T, override func(simURL string) map[string]string, logger *slog.Logger) *rig {
	t.Helper()
	return newRigParts(t, override, logger, app.Parts{})
}

// newRigParts builds the rig: the given parts are used instead of the ones
// the settings would build, and a nil logger is the production handler
// with both streams into r.logs.
func newRigParts(t *testing.T, override func(simURL string) map[string]string, logger *slog.Logger, parts app.Parts) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sim, simURL := simtest.Start(t)
	env := map[string]string{
		"HCPOPS_DATA_DIR":                    t.TempDir(),
		"CLUSTERS_SERVICE_URL":               simURL,
		"CLUSTERS_SERVICE_RETRY_LIMIT":       "0",
		"HCPOPS_NOTIFICATION_ALLOW_LOOPBACK": "true",
		"HCPOPS_ARM_CLIENT_APP_IDS":          armAppID,
	}
	if override != nil {
		maps.Copy(env, override(simURL))
	}
	getenv := func(k string) string { return env[k] }
	logs := &recordLog{}
	if logger == nil {
		logger = slog.New(logging.Streams(logs, logs, "json", slog.LevelInfo))
	}
	if parts.Store == nil && parts.OpenStore == nil {
		parts.OpenStore = openEmbedded
	}
	a, err := app.New(ctx, getenv, logger, parts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	srv, err := a.Handler(handlers.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	h.Client().Transport = asARM{h.Client().Transport}
	return &rig{t: t, app: a, sim: sim, handler: h, sink: newSink(t), logs: logs, clock: clock.OrReal(parts.Clock)}
}

// submit writes the cluster create the frontend would, with the fixed
// operation UUID the golden payload names.
func (r *rig) submit() {
	r.t.Helper()
	r.submitAt(time.Date(2026, 3, 14, 1, 59, 26, 714826736, time.UTC))
}

// submitAt is submit with the frontend's clock at now.
func (r *rig) submitAt(now time.Time) {
	r.t.Helper()
	fe := frontend.New(r.app.Store, testsupport.NewClock(now), func() string { return opName })
	_, err := fe.PutCluster(context.Background(), clusterID, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"},
		frontend.Options{TenantID: tenant, NotificationURI: r.sink.srv.URL + "/notify"})
	if err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) post(path string, body []byte, header ...string) (*http.Response, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.handler.URL+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set(events.HeaderInvocationID, "3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := r.handler.Client().Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (r *rig) resource() *document.Resource {
	r.t.Helper()
	item, err := r.app.Store.Get(context.Background(), sub, document.CosmosID(clusterID))
	if err != nil {
		r.t.Fatal(err)
	}
	res, err := document.ParseResource(item.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

func (r *rig) operation() *document.OperationDocument {
	r.t.Helper()
	item, err := r.app.Store.Get(context.Background(), sub, document.CosmosID(document.OperationResourceID(sub, opName)))
	if err != nil {
		r.t.Fatal(err)
	}
	op, err := document.ParseOperation(item.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return op
}

// golden returns testdata/name; with -update it first writes it as the
// Functions host would send the given documents (double-encoded).
func golden(t *testing.T, name string, docs func() []json.RawMessage) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var items []store.Item
		for _, d := range docs() {
			items = append(items, store.Item{Body: d})
		}
		// The local host's encoder is the one place that knows the host's
		// double encoding.
		documents, err := triggerhost.EncodeDocuments(items)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.MarshalIndent(map[string]any{
			"Data":     map[string]any{"documents": documents},
			"Metadata": map[string]any{"sys": map[string]any{"MethodName": "dispatchOperations", "UtcNow": "2026-03-14T01:59:27.0000000Z", "RandGuid": "6f3c1c55-5f0e-4f47-9a53-0b1d3c2f9e11"}},
		}, "", "  ")
		if err := os.WriteFile(path, append(body, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return b
}

// feedCursor is the change feed's position: anything written after it shows
// up as a change, which is how the tests see "no store writes".
func feedCursor(t *testing.T, s store.Store) string {
	t.Helper()
	cont := ""
	for {
		p, err := s.ChangeFeed(context.Background(), cont, 1000)
		if err != nil {
			t.Fatal(err)
		}
		cont = p.Continuation
		if len(p.Items) == 0 {
			return cont
		}
	}
}

func changesSince(t *testing.T, s store.Store, cont string) int {
	t.Helper()
	p, err := s.ChangeFeed(context.Background(), cont, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Items)
}

// logLines decodes JSON log lines.
func logLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ensureJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, b)
	}
	return m
}

func statusPath() string {
	return fmt.Sprintf("/subscriptions/%s/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/%s", sub, opName)
}
