package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// startServe runs Serve on a fresh 127.0.0.1 listener and returns its URL
// and a channel with Serve's result.
func startServe(t *testing.T, ctx context.Context, s *Server) (string, <-chan error) {
	t.Helper()
	base, done, _ := startServeWatched(t, ctx, s)
	return base, done
}

// startServeWatched is startServe that also says when Serve has closed
// its listener.
func startServeWatched(t *testing.T, ctx context.Context, s *Server) (string, <-chan error, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &watchedListener{Listener: ln, closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, w) }()
	return "http://" + ln.Addr().String(), done, w.closed
}

// watchedListener closes closed once it is closed itself.
type watchedListener struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (w *watchedListener) Close() error {
	err := w.Listener.Close()
	w.once.Do(func() { close(w.closed) })
	return err
}

type invokeOutcome struct {
	status int
	body   string
	err    error
}

func invokeAsync(url string) <-chan invokeOutcome {
	out := make(chan invokeOutcome, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"Data":{}}`))
		if err != nil {
			out <- invokeOutcome{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- invokeOutcome{status: resp.StatusCode, body: string(b)}
	}()
	return out
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	s := New(Config{ShutdownTimeout: 5 * time.Second}, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var sawCancel atomic.Bool
	_ = s.Handle("slow", func(ctx context.Context, inv Invocation) (Result, error) {
		close(entered)
		<-release
		sawCancel.Store(ctx.Err() != nil)
		return Result{InvokeResponse: events.InvokeResponse{Logs: []string{"finished"}}}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, served, closed := startServeWatched(t, ctx, s)

	res := invokeAsync(base + "/slow")
	<-entered
	cancel() // SIGTERM arrives while the invocation is running

	// Shutdown closes the listener soon after the signal; then a new
	// request is refused.
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener was still open 10s after shutdown began")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	if resp, err := client.Get(base + "/"); err == nil {
		resp.Body.Close()
		t.Fatal("a new request was accepted after the listener closed")
	}
	// The listener is closed, yet Serve must still be waiting for the
	// in-flight invocation.
	select {
	case err := <-served:
		t.Fatalf("Serve returned before the in-flight invocation finished: %v", err)
	default:
	}
	close(release)
	got := <-res
	if got.err != nil || got.status != http.StatusOK || !strings.Contains(got.body, `"finished"`) {
		t.Fatalf("in-flight invocation: %+v", got)
	}
	if sawCancel.Load() {
		t.Error("the in-flight invocation's context was cancelled by shutdown")
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v, want nil after a clean shutdown", err)
	}
}

func TestShutdownTimeoutCutsOffStuckInvocation(t *testing.T) {
	s := New(Config{ShutdownTimeout: 50 * time.Millisecond}, nil)
	entered := make(chan struct{})
	cancelled := make(chan struct{})
	_ = s.Handle("stuck", func(ctx context.Context, inv Invocation) (Result, error) {
		close(entered)
		<-ctx.Done() // only the cut-off can end this
		close(cancelled)
		return Result{}, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	base, served := startServe(t, ctx, s)
	res := invokeAsync(base + "/stuck")
	<-entered
	cancel()
	select {
	case err := <-served:
		if err == nil || !strings.Contains(err.Error(), "did not finish within 50ms") {
			t.Fatalf("Serve = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the shutdown timeout")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the stuck invocation's context was never cancelled")
	}
	if got := <-res; got.err == nil && got.status == http.StatusOK {
		t.Errorf("cut-off invocation reported success: %+v", got)
	}
}

func TestRunListensOnLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var logs testsupport.Buffer
	s := New(Config{Port: port}, slog.New(slog.NewJSONHandler(&logs, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	logs.AwaitText(t, "custom handler listening") // written once it listens
	url := "http://" + (Config{Port: port}).Addr() + "/"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET / once listening: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health = %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	// a second Run on a port in use fails with a message naming the address
	busy, _ := net.Listen("tcp", "127.0.0.1:0")
	defer busy.Close()
	err = New(Config{Port: busy.Addr().(*net.TCPAddr).Port}, nil).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Errorf("Run on a busy port = %v", err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("error does not wrap the listen error: %v", err)
	}
}
