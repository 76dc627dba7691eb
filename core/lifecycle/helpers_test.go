package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/clusterservice/simulator"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/embedded"
)

// fakeClock is the one clock the store, the simulator and the engine share.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// write describes one store write, for hooks and counts.
type write struct {
	kind string // Create, Replace, SoftDelete, Batch
	pk   string
	ids  []string
	body [][]byte
}

func (w write) contains(s string) bool {
	for _, b := range w.body {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// hookPhase says whether a hook runs before or after the write.
type hookPhase int

const (
	beforeWrite hookPhase = iota
	afterWrite
)

// recordingStore counts every write through it and lets a test interpose
// on writes: a hook error before a write stops it; after a write it makes
// the caller see a failure although the write happened (a crash).
type recordingStore struct {
	store.Store
	writes atomic.Int64
	mu     sync.Mutex
	hook   func(ctx context.Context, phase hookPhase, w write) error
}

func (s *recordingStore) setHook(h func(ctx context.Context, phase hookPhase, w write) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = h
}

func (s *recordingStore) run(ctx context.Context, phase hookPhase, w write) error {
	s.mu.Lock()
	h := s.hook
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(ctx, phase, w)
}

func (s *recordingStore) do(ctx context.Context, w write, fn func() error) error {
	if err := s.run(ctx, beforeWrite, w); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	s.writes.Add(1)
	return s.run(ctx, afterWrite, w)
}

func (s *recordingStore) Create(ctx context.Context, pk string, doc []byte) (item store.Item, err error) {
	err = s.do(ctx, write{kind: "Create", pk: pk, body: [][]byte{doc}}, func() (err error) {
		item, err = s.Store.Create(ctx, pk, doc)
		return err
	})
	return item, err
}

func (s *recordingStore) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (item store.Item, err error) {
	err = s.do(ctx, write{kind: "Replace", pk: pk, ids: []string{id}, body: [][]byte{doc}}, func() (err error) {
		item, err = s.Store.Replace(ctx, pk, id, doc, ifMatch)
		return err
	})
	return item, err
}

func (s *recordingStore) SoftDelete(ctx context.Context, pk, id string) error {
	return s.do(ctx, write{kind: "SoftDelete", pk: pk, ids: []string{id}}, func() error {
		return s.Store.SoftDelete(ctx, pk, id)
	})
}

func (s *recordingStore) Batch(ctx context.Context, pk string, ops []store.BatchOp) (items []store.Item, err error) {
	w := write{kind: "Batch", pk: pk}
	for _, op := range ops {
		w.ids = append(w.ids, op.ID)
		w.body = append(w.body, op.Body)
	}
	err = s.do(ctx, w, func() (err error) {
		items, err = s.Store.Batch(ctx, pk, ops)
		return err
	})
	return items, err
}

// sink is an ARM notification endpoint on 127.0.0.1 that can be told to
// fail its next calls.
type sink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	fail int
	log  []sinkCall
}

type sinkCall struct {
	path   string
	status int
	body   arm.OperationStatus
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body arm.OperationStatus
		_ = json.Unmarshal(data, &body)
		s.mu.Lock()
		status := http.StatusOK
		if s.fail > 0 {
			s.fail--
			status = http.StatusServiceUnavailable
		}
		s.log = append(s.log, sinkCall{path: r.URL.Path, status: status, body: body})
		s.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) uri(name string) string { return s.srv.URL + "/notify/" + name }

func (s *sink) failNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

// calls returns the calls made for operation name.
func (s *sink) calls(name string) []sinkCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkCall
	for _, c := range s.log {
		if c.path == "/notify/"+name {
			out = append(out, c)
		}
	}
	return out
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
	cs     *ocm.Client
	sink   *sink
	engine *Engine
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

func newEnv(t *testing.T, tweak ...func(*Config)) *env {
	t.Helper()
	e := &env{clk: newFakeClock(), logs: &syncBuffer{}}
	st, err := embedded.Open(filepath.Join(t.TempDir(), "store.db"), embedded.WithClock(e.clk.Now), embedded.WithoutSync())
	if err != nil {
		t.Fatalf("opening embedded store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.store = &recordingStore{Store: st}

	e.sim = simulator.New(simulator.WithClock(e.clk), simulator.WithDurations(testDurations()))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { e.sim.Close(); cancel() })
	url, err := e.sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting simulator: %v", err)
	}
	e.cs, err = ocm.New(ctx, ocm.Config{URL: url, RetryLimit: 2, RetryInterval: time.Millisecond, Timeout: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("ocm client: %v", err)
	}
	t.Cleanup(func() { _ = e.cs.Close() })
	e.sink = newSink(t)

	e.cfg = Config{PollConcurrency: 4, NotifyBackoffBase: 10 * time.Second, NotifyBackoffMax: time.Minute}
	for _, f := range tweak {
		f(&e.cfg)
	}
	e.engine = e.newEngine(t)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("LIFECYCLE_TEST_LOGS") != "" {
			t.Logf("engine log:\n%s", e.logs.String())
		}
	})
	return e
}

// newEngine builds another engine on the same store and CS: a second
// instance of the function app.
func (e *env) newEngine(t *testing.T) *Engine {
	t.Helper()
	eng, err := New(Deps{
		Store:          e.store,
		ClusterService: e.cs,
		Notifier:       notification.New(notification.Config{AllowLoopback: true, Timeout: 5 * time.Second}, nil),
		Clock:          e.clk.Now,
		Logger:         slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, e.cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return eng
}

// feed reads the change feed from where the last call stopped, as the
// Functions host's trigger does.
func (e *env) feed(t *testing.T) []json.RawMessage {
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
func (e *env) deliver(t *testing.T) (DispatchResult, error) {
	t.Helper()
	docs := e.feed(t)
	if len(docs) == 0 {
		return DispatchResult{}, nil
	}
	return e.engine.DispatchDocuments(context.Background(), docs)
}

func (e *env) tick(t *testing.T) TickResult {
	t.Helper()
	res, err := e.engine.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return res
}

// drive runs the host loop (deliver the feed, tick, let a minute pass)
// until every named operation is terminal and has notified ARM.
func (e *env) drive(t *testing.T, names ...string) {
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
func (e *env) op(t *testing.T, name string) *document.OperationDocument {
	t.Helper()
	op, err := e.engine.readOperation(context.Background(), testPK, document.CosmosID(document.OperationResourceID(testSub, name)))
	if err != nil {
		t.Fatalf("reading operation %s: %v", name, err)
	}
	return op
}

// resource reads a resource; nil when it is gone.
func (e *env) resource(t *testing.T, resourceID string) *document.Resource {
	t.Helper()
	r, err := e.engine.readResource(context.Background(), testPK, resourceID)
	if err != nil {
		t.Fatalf("reading resource %s: %v", resourceID, err)
	}
	return r
}

// rawResource reads a resource document as a generic JSON object.
func (e *env) rawResource(t *testing.T, resourceID string) map[string]any {
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
func (e *env) wantOp(t *testing.T, name string, status arm.ProvisioningState, code string) *document.OperationDocument {
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
