package triggerhost

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/testsupport"
)

type fakeClock = testsupport.Clock

func newFakeClock(now time.Time) *fakeClock { return testsupport.NewClock(now) }

// recorded is one request the test handler received.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// envelope decodes an invocation body.
func (r recorded) envelope(t *testing.T) (data, meta map[string]json.RawMessage) {
	t.Helper()
	var env struct {
		Data     map[string]json.RawMessage
		Metadata map[string]json.RawMessage
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("invocation body is not JSON: %v\n%s", err, r.Body)
	}
	return env.Data, env.Metadata
}

// testHandler is a custom handler on a real loopback port: it records every
// request but the readiness pings, and answers with respond.
type testHandler struct {
	requests chan recorded
	mu       sync.Mutex
	respond  func(recorded) (int, string)
}

func newTestHandler() *testHandler {
	return &testHandler{requests: make(chan recorded, 100), respond: func(recorded) (int, string) {
		return http.StatusOK, `{"Outputs":{},"Logs":["ok"],"ReturnValue":null}`
	}}
}

func (th *testHandler) setRespond(f func(recorded) (int, string)) {
	th.mu.Lock()
	th.respond = f
	th.mu.Unlock()
}

func (th *testHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" && r.Method == http.MethodGet {
		w.WriteHeader(http.StatusOK)
		return
	}
	body, _ := io.ReadAll(r.Body)
	rec := recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	th.mu.Lock()
	respond := th.respond
	th.mu.Unlock()
	th.requests <- rec
	status, out := respond(rec)
	if loc := rec.Header.Get("X-Test-Redirect"); loc != "" {
		w.Header().Set("Location", loc)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

// worker serves the handler on the port the host picked, as a real custom
// handler does.
func (th *testHandler) worker() Worker {
	return WorkerFunc(func(ctx context.Context, port int) error {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: th}
		go func() {
			<-ctx.Done()
			_ = srv.Close()
		}()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
}

// next waits for the next recorded request.
func (th *testHandler) next(t *testing.T) recorded {
	t.Helper()
	select {
	case r := <-th.requests:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the handler received nothing within 5s")
		return recorded{}
	}
}

// noneQueued fails on any request received and not yet read. It proves
// "nothing more happened" only after a positive signal that the host is
// done (a response, a checkpoint, the timer waiting again): a handler
// records a request before it answers, so by then it is queued.
func (th *testHandler) noneQueued(t *testing.T) {
	t.Helper()
	select {
	case r := <-th.requests:
		t.Fatalf("unexpected request %s %s: %s", r.Method, r.Path, r.Body)
	default:
	}
}

// writeApp lays out a script root and loads it.
func writeApp(t *testing.T, hostJSON string, functions map[string]string) *functionapp.App {
	t.Helper()
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "host.json"), []byte(hostJSON), 0o644))
	for name, fj := range functions {
		must(t, os.MkdirAll(filepath.Join(root, name), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name, "function.json"), []byte(fj), 0o644))
	}
	app, err := functionapp.Load(root, functionapp.Settings())
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// startHost runs a host until the test ends and waits until it has started.
func startHost(t *testing.T, cfg Config) *Host {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("host.Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("host did not stop within 10s")
		}
	})
	select {
	case <-h.Started():
	case err := <-done:
		t.Fatalf("host stopped before it started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("host did not start within 10s")
	}
	return h
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
