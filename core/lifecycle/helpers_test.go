package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/clusterservice/simulator"
	"github.com/hcpops/hcpops/core/clusterservice/simulator/simtest"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store/embedded"
	"github.com/hcpops/hcpops/core/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/internal/dev/armsink"
	"github.com/hcpops/hcpops/internal/testsupport"
)

// fakeClock is the one clock the store, the simulator and the engine share.
type fakeClock = testsupport.Clock

func newFakeClock() *fakeClock {
	return testsupport.NewClock(time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC))
}

// syncBuffer collects log output for a failing test's report.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// env is one lifecycle under test: embedded store, CS simulator reached
// through the real ocm client over HTTP, a notification sink, and an engine.
type env struct {
	clk    *fakeClock
	store  *recordingStore
	sim    *simulator.Simulator
	simURL string
	cs     *ocm.Client
	calls  *clusterservice.Recorder // what cs records into
	sink   testSink
	engine *Engine
	reads  *ReadService
	logs   *syncBuffer
	cfg    Config

	feedMu  sync.Mutex
	feedPos string
}

func testDurations() simulator.Durations {
	m := time.Minute
	return simulator.Durations{
		ClusterValidating: m, ClusterPending: m, ClusterInstalling: m, ClusterUpdating: m, ClusterUninstalling: m,
		NodePoolValidating: m, NodePoolPending: m, NodePoolInstalling: m, NodePoolUpdating: m, NodePoolUninstalling: m,
		ExternalAuthUninstalling: m, CredentialIssuing: m, CredentialRevoking: m, CredentialExpiry: 24 * time.Hour,
	}
}

func newEnv(t testing.TB, tweak ...func(*Config)) *env {
	t.Helper()
	e := &env{clk: newFakeClock(), logs: &syncBuffer{}}
	st := embeddedtest.Open(t, embedded.WithClock(e.clk), embedded.WithoutSync())
	e.store = &recordingStore{Store: st}

	var url string
	e.sim, url = simtest.Start(t, simulator.WithClock(e.clk), simulator.WithDurations(testDurations()))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.simURL = url
	var err error
	e.calls = clusterservice.NewRecorder(e.clk, nil)
	e.cs, err = ocm.New(ctx, ocm.Config{URL: url, RetryLimit: 2, RetryInterval: time.Millisecond, Timeout: 10 * time.Second,
		Recorder: e.calls}, nil)
	if err != nil {
		t.Fatalf("ocm client: %v", err)
	}
	t.Cleanup(func() { _ = e.cs.Close() })
	e.sink = newTestSink(t)

	e.cfg = Config{PollConcurrency: 4, NotifyBackoffBase: 10 * time.Second, NotifyBackoffMax: time.Minute}
	for _, f := range tweak {
		f(&e.cfg)
	}
	e.engine = e.newEngine(t)
	if e.reads, err = NewReadService(ReadDeps{Store: e.store, ClusterService: e.cs,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, ReadConfig{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("LIFECYCLE_TEST_LOGS") != "" {
			t.Logf("engine log:\n%s", e.logs.String())
		}
	})
	return e
}

// newEngine builds another engine on the same store and CS: a second
// instance of the function app.
func (e *env) newEngine(t testing.TB) *Engine {
	t.Helper()
	eng, err := New(Deps{
		Store:          e.store,
		ClusterService: e.cs,
		Calls:          e.calls,
		Notifier:       notification.New(notification.Config{AllowLoopback: true, Timeout: 5 * time.Second}, nil),
		Clock:          e.clk,
		Logger:         slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, e.cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return eng
}

// feed reads the change feed from where the last call stopped, as the
// Functions host's trigger does.
func (e *env) feed(t testing.TB) []json.RawMessage {
	t.Helper()
	e.feedMu.Lock()
	defer e.feedMu.Unlock()
	var docs []json.RawMessage
	for {
		page, err := e.store.ChangeFeed(context.Background(), e.feedPos, 100)
		if err != nil {
			t.Fatalf("reading change feed: %v", err)
		}
		for _, it := range page.Items {
			docs = append(docs, json.RawMessage(it.Body))
		}
		e.feedPos = page.Continuation
		if len(page.Items) == 0 {
			return docs
		}
	}
}

// deliver dispatches whatever the change feed has; a failed batch is
// reported, not fatal, since the host would just redeliver it.
func (e *env) deliver(t testing.TB) (DispatchResult, error) {
	t.Helper()
	docs := e.feed(t)
	if len(docs) == 0 {
		return DispatchResult{}, nil
	}
	return e.engine.DispatchDocuments(context.Background(), docs)
}

func (e *env) tick(t testing.TB) TickResult {
	t.Helper()
	res, err := e.engine.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return res
}

// drive runs the host loop (deliver the feed, tick, let a minute pass)
// until every named operation is terminal and has notified ARM.
func (e *env) drive(t testing.TB, names ...string) {
	t.Helper()
	for round := 0; round < 40; round++ {
		if _, err := e.deliver(t); err != nil {
			t.Logf("round %d: dispatch: %v", round, err)
		}
		e.tick(t)
		done := true
		for _, n := range names {
			op := e.op(t, n)
			if op == nil || !op.Properties.Status.IsTerminal() || op.Properties.NotificationURI != "" {
				done = false
			}
		}
		if done {
			return
		}
		e.clk.Advance(time.Minute)
	}
	for _, n := range names {
		if op := e.op(t, n); op != nil {
			t.Errorf("operation %s %s: still %s", op.Properties.Request, op.Properties.ExternalID, op.Properties.Status)
		}
	}
	t.Fatalf("operations did not finish in 40 rounds")
}

// op reads operation name; nil when it is gone.
func (e *env) op(t testing.TB, name string) *document.OperationDocument {
	t.Helper()
	op, err := e.engine.readOperation(context.Background(), testPK, document.CosmosID(document.OperationResourceID(testSub, name)))
	if err != nil {
		t.Fatalf("reading operation %s: %v", name, err)
	}
	return op
}

// resource reads a resource; nil when it is gone.
func (e *env) resource(t testing.TB, resourceID string) *document.Resource {
	t.Helper()
	r, err := e.engine.readResource(context.Background(), testPK, resourceID)
	if err != nil {
		t.Fatalf("reading resource %s: %v", resourceID, err)
	}
	return r
}

// rawResource reads a resource document as a generic JSON object.
func (e *env) rawResource(t testing.TB, resourceID string) map[string]any {
	t.Helper()
	item, err := e.store.Get(context.Background(), testPK, document.CosmosID(resourceID))
	if err != nil {
		t.Fatalf("reading resource %s: %v", resourceID, err)
	}
	var m map[string]any
	if err := json.Unmarshal(item.Body, &m); err != nil {
		t.Fatalf("decoding resource %s: %v", resourceID, err)
	}
	return m
}

// wantOp checks an operation's status and, when code is not empty, its
// error code.
func (e *env) wantOp(t testing.TB, name string, status arm.ProvisioningState, code string) *document.OperationDocument {
	t.Helper()
	op := e.op(t, name)
	if op == nil {
		t.Fatalf("operation %s is gone", name)
	}
	if op.Properties.Status != status {
		t.Fatalf("operation %s: status %s, want %s (error %+v)", name, op.Properties.Status, status, op.Properties.Error)
	}
	got := ""
	if op.Properties.Error != nil {
		got = op.Properties.Error.Code
	}
	if got != code {
		t.Fatalf("operation %s: error code %q, want %q (error %+v)", name, got, code, op.Properties.Error)
	}
	return op
}

// csPosts counts successful-or-not POSTs of a CS route (faults excluded).
func (e *env) csPosts(pattern string) int {
	l := e.sim.Ledger()
	return l.Count(http.MethodPost, pattern) - l.Faults["POST "+pattern]
}

func lower(s string) string { return strings.ToLower(s) }

// testSink is armsink.Sink addressed by operation name, as the tests
// here address notification URIs.
type testSink struct{ *armsink.Sink }

func newTestSink(t testing.TB) testSink {
	t.Helper()
	s, err := armsink.Start(context.Background(), armsink.Config{})
	if err != nil {
		t.Fatalf("starting the notification sink: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return testSink{s}
}

func (s testSink) uri(name string) string { return s.URI(name) }

func (s testSink) failNext(n int) { s.FailNext(n) }

// calls returns every POST made for operation name, failed ones included.
func (s testSink) calls(name string) []armsink.Call {
	c, _ := s.Calls(s.URI(name)) // a URI of this sink: never an error
	return c
}
