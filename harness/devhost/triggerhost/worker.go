package triggerhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Worker runs a custom handler that listens on 127.0.0.1:port until ctx is
// done or it fails. It may be run again after it returns: that is how the
// host restarts a handler.
type Worker interface {
	Run(ctx context.Context, port int) error
}

// WorkerFunc adapts a function to Worker; an in-process handler is one.
type WorkerFunc func(ctx context.Context, port int) error

// Run calls f.
func (f WorkerFunc) Run(ctx context.Context, port int) error { return f(ctx, port) }

// Supervisor timings, as the real host uses them.
const (
	readinessInterval     = 25 * time.Millisecond
	initializationTimeout = 30 * time.Second
	restartDelay          = 200 * time.Millisecond
)

// Supervisor keeps one worker running on a fixed loopback port, the way the
// host keeps its custom handler process: it starts it, pings GET / until
// anything answers, and starts it again whenever it exits or Restart is
// called. Invocations wait for readiness before they are sent.
type Supervisor struct {
	worker Worker
	port   int
	client *http.Client
	logger *slog.Logger

	mu      sync.Mutex
	ready   chan struct{} // closed while the current worker answers
	stop    context.CancelFunc
	starts  int
	started chan struct{} // closed by the next start
	running bool
	// requested marks a stop asked for by Restart, not a crash.
	requested bool
}

// NewSupervisor prepares a supervisor; port 0 picks a free loopback port now,
// so BaseURL is known before Run.
func NewSupervisor(w Worker, port int, logger *slog.Logger) (*Supervisor, error) {
	if w == nil {
		return nil, errors.New("supervisor: nil worker")
	}
	if port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{
		worker: w,
		port:   port,
		client: &http.Client{Timeout: time.Second},
		logger: logger,
		ready:  make(chan struct{}),
	}, nil
}

// FreePort asks the kernel for a free 127.0.0.1 port, as the host does
// before it starts the handler. Another process could take it in between;
// the host accepts the same race.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Port is the port the worker is told to listen on.
func (s *Supervisor) Port() int { return s.port }

// BaseURL is where invocations are sent.
func (s *Supervisor) BaseURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// Starts counts how many times the worker has been started.
func (s *Supervisor) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// AwaitStarts waits until the worker has been started n times (a
// restart's start included), or until ctx is done.
func (s *Supervisor) AwaitStarts(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		starts := s.starts
		if s.started == nil {
			s.started = make(chan struct{})
		}
		started := s.started
		s.mu.Unlock()
		if starts >= n {
			return nil
		}
		select {
		case <-started:
		case <-ctx.Done():
			return fmt.Errorf("waiting for start %d of the custom handler (%d so far): %w", n, starts, context.Cause(ctx))
		}
	}
}

// Ready waits until the current worker has answered a ping.
func (s *Supervisor) Ready(ctx context.Context) error {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the custom handler on port %d: %w", s.port, context.Cause(ctx))
	}
}

// Restart stops the running worker; Run starts a fresh one. Invocations in
// flight fail, as they do when the host's handler process dies.
func (s *Supervisor) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.requested = true
		s.stop()
	}
}

// Run keeps the worker up until ctx is done.
func (s *Supervisor) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errors.New("supervisor is already running")
	}
	s.running = true
	s.mu.Unlock()
	for {
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		s.mu.Lock()
		requested := s.requested
		s.requested = false
		s.mu.Unlock()
		if requested {
			s.logger.LogAttrs(ctx, slog.LevelInfo, "custom handler stopped for a restart", slog.Int("port", s.port))
		} else {
			s.logger.LogAttrs(ctx, slog.LevelWarn, "custom handler exited; restarting",
				slog.Int("port", s.port), slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(restartDelay):
		}
	}
}

func (s *Supervisor) runOnce(ctx context.Context) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	s.mu.Lock()
	s.stop = stop
	s.starts++
	n := s.starts
	if s.started != nil {
		close(s.started)
		s.started = nil
	}
	s.mu.Unlock()

	done := make(chan error, 1)
	go func() { done <- s.worker.Run(wctx, s.port) }()
	s.logger.LogAttrs(ctx, slog.LevelInfo, "custom handler starting", slog.Int("port", s.port), slog.Int("start", n))

	probe := time.NewTicker(readinessInterval)
	defer probe.Stop()
	deadline := time.After(initializationTimeout)
	for !s.ping(wctx) {
		select {
		case err := <-done:
			return fmt.Errorf("custom handler exited before it answered GET /: %w", err)
		case <-deadline:
			stop()
			if exit := <-done; exit != nil {
				s.logger.LogAttrs(ctx, slog.LevelDebug, "custom handler stopped after it never answered", slog.Any("error", exit))
			}
			return fmt.Errorf("custom handler did not answer GET / on port %d within %s", s.port, initializationTimeout)
		case <-wctx.Done():
			return <-done
		case <-probe.C:
		}
	}
	s.mu.Lock()
	close(s.ready)
	s.mu.Unlock()
	s.logger.LogAttrs(ctx, slog.LevelInfo, "custom handler ready", slog.String("url", s.BaseURL()), slog.Int("start", n))

	err := <-done
	s.mu.Lock()
	s.ready = make(chan struct{})
	s.mu.Unlock()
	if err == nil {
		err = errors.New("custom handler returned")
	}
	return err
}

// ping reports whether anything answers GET /; the host asks no more.
func (s *Supervisor) ping(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.BaseURL()+"/", nil)
	if err != nil {
		return false
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
