package lifecycle

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
)

// armEndpoint is a scripted ARM notification endpoint, reached in memory
// at url: it counts the POSTs and answers each as mode says.
type armEndpoint struct {
	url     string
	posts   atomic.Int32
	arrived chan struct{}
	release chan struct{}
	once    sync.Once

	mu   sync.Mutex
	mode string // "fail": 500; "trickle": 200, then a body that never ends; "hang": no answer until released
}

func newARMEndpoint(t *testing.T, e *env, mode string) *armEndpoint {
	a := &armEndpoint{mode: mode, arrived: make(chan struct{}, 64), release: make(chan struct{})}
	a.url = e.serveARM("127.0.0.2:9", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		a.posts.Add(1)
		a.arrived <- struct{}{}
		a.mu.Lock()
		mode := a.mode
		a.mu.Unlock()
		switch mode {
		case "fail":
			w.WriteHeader(http.StatusInternalServerError)
			return
		case "hang":
			select {
			case <-r.Context().Done():
			case <-a.release:
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select { // 1 byte, then nothing more
		case <-r.Context().Done():
		case <-a.release:
		}
	}))
	t.Cleanup(a.unblock)
	return a
}

func (a *armEndpoint) unblock() { a.once.Do(func() { close(a.release) }) }

func (a *armEndpoint) setMode(m string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mode = m
}

// createNotifying submits a cluster create whose notification goes to uri.
func (e *env) createNotifying(t *testing.T, name, uri string) string {
	t.Helper()
	return e.submit(t, request{}, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		o.NotificationURI = uri
		return fe.PutCluster(ctx, clusterRID(name), defaultSpec(clusterRID(name)).cluster, o)
	})
}

// runToTerminal delivers and ticks, a minute a round, until the operation
// is terminal.
func (e *env) runToTerminal(t *testing.T, name string) *document.OperationDocument {
	t.Helper()
	for round := 0; round < 40; round++ {
		_, _ = e.deliver(t)
		e.tick(t)
		if op := e.op(t, name); op != nil && op.Properties.Status.IsTerminal() {
			return op
		}
		e.clk.Advance(time.Minute)
	}
	t.Fatalf("operation %s did not finish in 40 rounds", name)
	return nil
}

// TestTricklingARMNotifiedOnce: ARM answers 200 at once and then sends its
// body a byte at a time (here: one byte, then nothing). The 200 is the
// delivery: the URI is cleared in a write context of its own, and later
// ticks do not post again.
func TestTricklingARMNotifiedOnce(t *testing.T) {
	// A write timeout far below the notifier's: a POST that held its
	// caller's write context would leave the clear nothing.
	e := newEnv(t, func(c *Config) { c.WriteTimeout = 300 * time.Millisecond })
	arm := newARMEndpoint(t, e, "trickle")
	name := e.createNotifying(t, "trickle", arm.url+"/notify")
	e.runToTerminal(t, name)
	for range 5 {
		e.clk.Advance(2 * time.Minute) // past any notification backoff
		e.tick(t)
	}
	if op := e.op(t, name); op.Properties.NotificationURI != "" {
		t.Errorf("notification URI still set after a delivered notification")
	}
	if n := arm.posts.Load(); n != 1 {
		t.Errorf("ARM got %d POSTs, want 1", n)
	}
}

// TestConcurrentTicksNotifyOnce: ticks running at once in one process
// never post one operation's notification twice, even to an endpoint
// that does not answer.
func TestConcurrentTicksNotifyOnce(t *testing.T) {
	e := newEnv(t)
	arm := newARMEndpoint(t, e, "fail")
	name := e.createNotifying(t, "concurrent", arm.url+"/notify")
	e.runToTerminal(t, name)
	for len(arm.arrived) > 0 {
		<-arm.arrived
	}
	if n := arm.posts.Load(); n != 1 {
		t.Fatalf("%d POSTs while the operation finished, want the one that failed", n)
	}
	arm.setMode("hang")
	e.clk.Advance(2 * time.Minute) // the retry is due

	const ticks = 6
	done := make(chan error, ticks)
	for range ticks {
		go func() {
			_, err := e.engine.Tick(context.Background())
			done <- err
		}()
	}
	<-arm.arrived // one POST is in flight, and hangs
	for i := 0; i < ticks-1; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Tick: %v", err)
			}
		case <-arm.arrived:
			t.Fatalf("a second POST of the same notification while the first hangs (%d so far)", arm.posts.Load())
		}
	}
	arm.unblock()
	if err := <-done; err != nil {
		t.Fatalf("Tick: %v", err)
	}
	if n := arm.posts.Load(); n != 2 {
		t.Errorf("ARM got %d POSTs, want 2 (the failed one, then one for %d concurrent ticks)", n, ticks)
	}
	if op := e.op(t, name); op.Properties.NotificationURI != "" {
		t.Errorf("notification URI still set after the delivered retry")
	}
}

// ctxNotifier records the context each POST gets.
type ctxNotifier struct {
	next Notifier

	mu       sync.Mutex
	calls    int
	shortest time.Duration // least time left on a POST's context; 0 without a deadline
	returned time.Time     // when the last POST returned
}

func (n *ctxNotifier) Notify(ctx context.Context, uri string, status arm.OperationStatus) error {
	if dl, ok := ctx.Deadline(); ok {
		n.mu.Lock()
		if left := time.Until(dl); n.shortest == 0 || left < n.shortest {
			n.shortest = left
		}
		n.mu.Unlock()
	}
	err := n.next.Notify(ctx, uri, status)
	n.mu.Lock()
	n.calls++
	n.returned = time.Now()
	n.mu.Unlock()
	return err
}

// TestNotificationOwnContexts: the POST is not held to the deadline of the
// status write that led to it, and the URI clear gets a whole write
// timeout of its own, counted from after the POST.
func TestNotificationOwnContexts(t *testing.T) {
	e := newEnv(t)
	n := &ctxNotifier{next: e.notifier()}
	eng, err := New(Deps{Store: e.store, ClusterService: e.cs, Calls: e.calls, Notifier: n, Clock: e.clk,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.engine = eng
	var mu sync.Mutex
	var clearDeadline time.Time
	e.store.setHook(func(ctx context.Context, phase hookPhase, w write) error {
		if phase == beforeWrite && w.kind == "Replace" {
			if dl, ok := ctx.Deadline(); ok {
				mu.Lock()
				clearDeadline = dl
				mu.Unlock()
			}
		}
		return nil
	})
	name := e.create(t, document.KindCluster, clusterRID("ctx"), request{notify: true})
	e.runToTerminal(t, name)
	if op := e.op(t, name); op.Properties.NotificationURI != "" || len(e.sink.calls(name)) != 1 {
		t.Fatalf("notification not delivered and cleared once: uri %q, %d calls", op.Properties.NotificationURI, len(e.sink.calls(name)))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if n.shortest != 0 && n.shortest <= e.engine.cfg.WriteTimeout {
		t.Errorf("the POST had %s left on its context: a write's deadline (%s), not its own", n.shortest, e.engine.cfg.WriteTimeout)
	}
	if want := n.returned.Add(e.engine.cfg.WriteTimeout); clearDeadline.Before(want) {
		t.Errorf("the URI clear's deadline %s is before %s: its context was made before the POST", clearDeadline, want)
	}
}

// TestDeliveredNotificationIsNotPostedAgain: when the URI clear after a
// delivery fails, the next tick retries the clear, not the POST.
func TestDeliveredNotificationIsNotPostedAgain(t *testing.T) {
	e := newEnv(t)
	var failed atomic.Bool
	name := e.create(t, document.KindCluster, clusterRID("again"), request{notify: true})
	opID := document.CosmosID(document.OperationResourceID(testSub, name))
	e.store.setHook(func(_ context.Context, phase hookPhase, w write) error {
		clear := w.kind == "Replace" && len(w.ids) == 1 && w.ids[0] == opID && !w.contains(e.sink.uri(name))
		if phase == beforeWrite && clear && failed.CompareAndSwap(false, true) {
			return errors.New("injected: the store refused the clear")
		}
		return nil
	})
	e.runToTerminal(t, name)
	if !failed.Load() || e.op(t, name).Properties.NotificationURI == "" {
		t.Fatalf("the clear did not fail as injected (failed %v)", failed.Load())
	}
	for range 3 {
		e.clk.Advance(2 * time.Minute)
		e.tick(t)
	}
	if op := e.op(t, name); op.Properties.NotificationURI != "" {
		t.Errorf("notification URI still set")
	}
	if n := len(e.sink.calls(name)); n != 1 {
		t.Errorf("ARM got %d POSTs, want 1", n)
	}
}
