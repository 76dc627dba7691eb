package lifecycle

import (
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
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// fakeClock is the one clock the store, the simulator and the engine share.
type fakeClock = testsupport.Clock

func newFakeClock() *fakeClock {
	return testsupport.NewClock(testsupport.Epoch())
}

// syncBuffer collects log output for a failing test's report.
type syncBuffer = testsupport.Buffer

// env is one lifecycle under test, in memory: the memory store, Clusters
// Service as csfake (the simulator behind the production client, no
// socket), a notification sink reached in memory, and an engine, all on
// one manual clock. Nothing waits on real time: a test that meets a
// timeout (a hung CS call, a tick's budget) runs in a synctest bubble
// (inBubble), whose fake time passes whenever every goroutine waits.
type env struct {
	clk    *fakeClock
	store  *recordingStore
	sim    *simulator.Simulator
	fake   *csfake.CS
	cs     *ocm.Client
	calls  *clusterservice.Recorder // what cs records into
	sink   testSink
	engine *Engine
	reads  *armread.ReadService
	logs   *syncBuffer
	cfg    Config

	feedMu  sync.Mutex
	feedPos string

	armMu sync.Mutex
	arms  map[string]http.Handler // ARM endpoints by host, besides the sink
}

func testDurations() simulator.Durations { return simulator.EveryStateTakes(time.Minute) }

func newEnv(t testing.TB, tweak ...func(*Config)) *env {
	t.Helper()
	e := &env{clk: newFakeClock(), logs: &syncBuffer{}}
	st := memory.New(memory.WithClock(e.clk))
	t.Cleanup(func() { _ = st.Close() })
	e.store = &recordingStore{Store: st}

	e.calls = clusterservice.NewRecorder(e.clk, nil)
	e.fake = csfake.New(t, csfake.Config{RetryLimit: 2, Timeout: 10 * time.Second, Recorder: e.calls},
		simulator.WithClock(e.clk), simulator.WithDurations(testDurations()))
	e.sim, e.cs = e.fake.Sim, e.fake.Client
	e.sink = newTestSink(t)
	var err error

	e.cfg = Config{PollConcurrency: 4, NotifyBackoffBase: 10 * time.Second, NotifyBackoffMax: time.Minute}
	for _, f := range tweak {
		f(&e.cfg)
	}
	e.engine = e.newEngine(t)
	if e.reads, err = armread.NewReadService(armread.ReadDeps{Store: e.store, ClusterService: e.cs,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, armread.ReadConfig{}); err != nil {
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
		Notifier:       e.notifier(),
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
	s, err := armsink.New(armsink.Config{})
	if err != nil {
		t.Fatalf("the notification sink: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return testSink{s}
}

// notifier is the production notifier, reaching in memory the sink and
// any other ARM endpoint a test serves (serveARM).
func (e *env) notifier() *notification.Notifier {
	const timeout = 5 * time.Second
	return notification.New(notification.Config{AllowLoopback: true, Timeout: timeout}, &http.Client{
		Transport:     invoke.InMemory(http.HandlerFunc(e.routeARM)),
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	})
}

// serveARM answers the notifications to host with h; it returns the base
// URL to name.
func (e *env) serveARM(host string, h http.Handler) string {
	e.armMu.Lock()
	defer e.armMu.Unlock()
	if e.arms == nil {
		e.arms = map[string]http.Handler{}
	}
	e.arms[host] = h
	return "http://" + host
}

// routeARM hands a notification to the endpoint of its host: the sink's,
// or one a test serves; any other host is down.
func (e *env) routeARM(w http.ResponseWriter, r *http.Request) {
	e.armMu.Lock()
	h, ok := e.arms[r.Host]
	e.armMu.Unlock()
	switch {
	case ok:
		h.ServeHTTP(w, r)
	case "http://"+r.Host == armsink.InMemoryURL:
		e.sink.ServeHTTP(w, r)
	default:
		http.Error(w, "no such ARM endpoint in this test: "+r.Host, http.StatusBadGateway)
	}
}

func (s testSink) uri(name string) string { return s.URI(name) }

func (s testSink) failNext(n int) { s.FailNext(n) }

// calls returns every POST made for operation name, failed ones included.
func (s testSink) calls(name string) []armsink.Call {
	c, _ := s.Calls(s.URI(name)) // a URI of this sink: never an error
	return c
}
