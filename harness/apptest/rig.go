// Package apptest is the Function App wired for tests: what production
// assembles from settings (app.New: the store, the ocm client, the
// notifier, the engine) behind the real handler on loopback, with the
// simulator as Clusters Service, a notification sink and every log line
// kept as the host would receive it. The app's own tests and the deploy/
// artifacts' (whose queries read the records it writes) share it.
package apptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/auth"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/simulator/simtest"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/testsupport"
	"github.com/hcpops/hcpops/logging"
)

// The one cluster create a Rig submits (Submit), with the fixed operation
// UUID app/testdata's golden host payloads name.
const (
	Subscription = testsupport.Subscription
	ClusterID    = "/subscriptions/" + Subscription + "/resourceGroups/" + testsupport.ResourceGroup + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"
	OpName       = "e2f8f733-dd90-49b0-8b2b-f390b42aa339"
	Tenant       = testsupport.Tenant
)

// ARMAppID is the application a Rig's callers authenticate as: a made-up
// id standing for ARM's, allowed by HCPOPS_ARM_CLIENT_APP_IDS.
const ARMAppID = "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"

// Options shape a Rig; the zero value is the app on its defaults.
type Options struct {
	// Settings changes the Rig's settings; it is given the simulator's
	// URL.
	Settings func(simURL string) map[string]string
	// Logger is the app's; nil: the production handler, both streams
	// into the Rig's Logs, from Level up (zero: Info).
	Logger *slog.Logger
	Level  slog.Level
	// Parts are used instead of what the settings would build; with no
	// store, the embedded one opens in a temporary directory.
	Parts app.Parts
}

// Rig is one Function App under test.
type Rig struct {
	T       *testing.T
	App     *app.App
	Sim     *simulator.Simulator
	Handler *httptest.Server
	Sink    *Sink
	Logs    *RecordLog
	// Clock is the app's (Parts.Clock), or the wall clock.
	Clock clock.Clock

	ticks int // Tick's count, to wait for each one's line
}

// New builds a Rig; everything it opens closes when t ends.
func New(t *testing.T, o Options) *Rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sim, simURL := simtest.Start(t)
	env := map[string]string{
		"HCPOPS_DATA_DIR":                    t.TempDir(),
		"CLUSTERS_SERVICE_URL":               simURL,
		"CLUSTERS_SERVICE_RETRY_LIMIT":       "0",
		"HCPOPS_NOTIFICATION_ALLOW_LOOPBACK": "true",
		"HCPOPS_ARM_CLIENT_APP_IDS":          ARMAppID,
	}
	if o.Settings != nil {
		maps.Copy(env, o.Settings(simURL))
	}
	getenv := func(k string) string { return env[k] }
	logs := &RecordLog{}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(logging.Streams(logs, logs, "json", o.Level))
	}
	parts := o.Parts
	if parts.Store == nil && parts.OpenStore == nil {
		parts.OpenStore = OpenEmbedded
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
	return &Rig{T: t, App: a, Sim: sim, Handler: h, Sink: NewSink(t), Logs: logs, Clock: clock.OrReal(parts.Clock)}
}

// OpenEmbedded stands in for the developer binary's local store in tests
// that build the app from settings: the app itself opens Cosmos DB alone.
func OpenEmbedded(_ context.Context, getenv func(string) string, logger *slog.Logger) (store.Store, string, error) {
	path := filepath.Join(getenv("HCPOPS_DATA_DIR"), "store.db")
	s, err := embedded.Open(path, embedded.WithLogger(logger))
	return s, "embedded " + path, err
}

// Principal is the X-MS-CLIENT-PRINCIPAL header App Service
// Authentication would inject for a token of application appID.
func Principal(appID string) string {
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
		r.Header.Set(auth.HeaderClientPrincipal, Principal(ARMAppID))
	}
	return a.base.RoundTrip(r)
}

// Submit writes the cluster create the frontend would, with the fixed
// operation UUID the golden payload names.
func (r *Rig) Submit() {
	r.T.Helper()
	r.SubmitAt(time.Date(2026, 3, 14, 1, 59, 26, 714826736, time.UTC))
}

// SubmitAt is Submit with the frontend's clock at now.
func (r *Rig) SubmitAt(now time.Time) {
	r.T.Helper()
	fe := frontend.New(r.App.Store, testsupport.NewClock(now), func() string { return OpName })
	_, err := fe.PutCluster(context.Background(), ClusterID, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"},
		frontend.Options{TenantID: Tenant, NotificationURI: r.Sink.URL() + "/notify"})
	if err != nil {
		r.T.Fatal(err)
	}
}

// Post sends a host invocation (or any POST) to the handler; header are
// name/value pairs.
func (r *Rig) Post(path string, body []byte, header ...string) (*http.Response, []byte) {
	r.T.Helper()
	req, err := http.NewRequest(http.MethodPost, r.Handler.URL+path, bytes.NewReader(body))
	if err != nil {
		r.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set(events.HeaderInvocationID, "3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := r.Handler.Client().Do(req)
	if err != nil {
		r.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// Dispatch posts the change feed's batch of the submitted create, as the
// host delivers it; t fails unless the handler answers 200.
func (r *Rig) Dispatch() {
	r.T.Helper()
	if resp, body := r.Post("/dispatchOperations", ReadFile(r.T, "app/testdata/dispatch-cluster-create.json")); resp.StatusCode != http.StatusOK {
		r.T.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
}

// Tick posts a timer tick and waits for its poll.tick line (written as
// the response goes out); t fails unless the handler answers 200.
func (r *Rig) Tick() {
	r.T.Helper()
	r.ticks++
	if resp, body := r.Post("/pollOperations", ReadFile(r.T, "events/testdata/tick.json")); resp.StatusCode != http.StatusOK {
		r.T.Fatalf("tick: %d %s", resp.StatusCode, body)
	}
	r.Logs.Named(r.T, "poll.tick", r.ticks)
}

// Resource is the submitted cluster's document.
func (r *Rig) Resource() *document.Resource { return r.ClusterResource("myCluster") }

// Operation is the submitted create's operation document.
func (r *Rig) Operation() *document.OperationDocument {
	r.T.Helper()
	op, err := document.ParseOperation(r.get(document.CosmosID(document.OperationResourceID(Subscription, OpName))))
	if err != nil {
		r.T.Fatal(err)
	}
	return op
}

// SubmitCluster writes a cluster create as the frontend would and returns
// the operation document as the change feed carries it.
func (r *Rig) SubmitCluster(name string) map[string]any {
	r.T.Helper()
	fe := frontend.New(r.App.Store, r.Clock, uuid.NewString)
	acc, err := fe.PutCluster(context.Background(), testsupport.ClusterRID(name),
		frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, frontend.Options{TenantID: Tenant})
	if err != nil {
		r.T.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.get(acc.Operation.ID), &doc); err != nil {
		r.T.Fatal(err)
	}
	return doc
}

// ClusterResource reads the cluster resource document of name.
func (r *Rig) ClusterResource(name string) *document.Resource {
	r.T.Helper()
	res, err := document.ParseResource(r.get(document.CosmosID(testsupport.ClusterRID(name))))
	if err != nil {
		r.T.Fatal(err)
	}
	return res
}

// get is the body of the subscription's document id; t fails without it.
func (r *Rig) get(id string) []byte {
	r.T.Helper()
	item, err := r.App.Store.Get(context.Background(), Subscription, id)
	if err != nil {
		r.T.Fatal(err)
	}
	return item.Body
}

// Path is a file of the repository, by its path from the repository's
// root, wherever the test runs.
func Path(rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(rel))
}

// ReadFile is the repository's file rel (Path); t fails without it.
func ReadFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
