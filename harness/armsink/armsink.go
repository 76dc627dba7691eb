// Package armsink stands in for ARM's async-notification endpoint: the
// lifecycle's last step POSTs an operation's terminal status to the
// notificationUri the frontend stored, and in local runs, the soak and
// tests that URI points here, on loopback, where what was sent can be read
// back and failures can be ordered. No part of the shipped handler links it.
package armsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// Config shapes a Sink.
type Config struct {
	// FailFirst is how many valid POSTs are answered 500 before any other,
	// so a run or a test can watch the notifier retry a known number of
	// times; FailRate applies after them.
	FailFirst int
	// FailRate is the share of POSTs answered 500, in [0,1), so a run can
	// exercise the notifier's retries; 0 answers every valid POST 200.
	FailRate float64
	// Seed makes the choice of failed POSTs repeatable.
	Seed uint64
	// Logger hears of each delivered notification; nil discards.
	Logger *slog.Logger
	// Addr is where Start listens; "" is a free 127.0.0.1 port.
	Addr string
}

// Sink stands in for ARM's async-notification endpoint on a loopback port,
// so local runs (`hcpopsctl dev`, the soak) can see what the notifier sent
// without reaching ARM.
type Sink struct {
	url    string
	cfg    Config
	logger *slog.Logger
	srv    *http.Server
	// ln is closed by shut as well: Serve runs on a goroutine that may not
	// have taken it yet when Close comes, and srv.Close closes only the
	// listeners Serve took, leaving the port bound until it does.
	ln net.Listener
	// stopWatch releases the ctx watch that closes the server.
	stopWatch func() bool
	stopOnce  sync.Once
	stopped   chan struct{} // closed once the server is

	mu       sync.Mutex
	rng      *rand.Rand
	failLeft int // POSTs still to fail before FailRate applies
	attempts int
	failures int
	calls    map[string][]Call // by URI path, in arrival order
	arrived  chan struct{}     // closed by the next valid POST
	mode     Mode
	release  chan struct{} // closed when the sink stops hanging
	holding  int           // POSTs held now
	held     chan struct{} // closed when holding next changes
}

// Call is one valid POST the sink answered.
type Call struct {
	// Status is the HTTP status answered: 200, or 500 for a failure on
	// purpose.
	Status int
	Body   arm.OperationStatus
}

// Start serves a sink on cfg.Addr (by default a free 127.0.0.1 port) until
// ctx is done or Close is called.
func Start(ctx context.Context, cfg Config) (*Sink, error) {
	s, err := newSink(cfg, "")
	if err != nil {
		return nil, err
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("notification sink: %w", err)
	}
	s.url, s.ln = "http://"+ln.Addr().String(), ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.ErrorContext(ctx, "notification sink stopped", "error", err)
		}
	}()
	s.stopWatch = context.AfterFunc(ctx, func() { _ = s.shut() })
	return s, nil
}

// InMemoryURL is the base of a sink New makes: a loopback address (as the
// notifier's local allow-list wants) on the discard port, which nothing
// dials, since such a sink is reached in memory.
const InMemoryURL = "http://127.0.0.1:9"

// New is a sink that listens nowhere: a unit test's notifier reaches its
// ServeHTTP through an in-memory transport, at URIs under InMemoryURL.
func New(cfg Config) (*Sink, error) { return newSink(cfg, InMemoryURL) }

func newSink(cfg Config, url string) (*Sink, error) {
	if cfg.FailRate < 0 || cfg.FailRate >= 1 {
		return nil, fmt.Errorf("notification sink: failure rate %v: want [0,1)", cfg.FailRate)
	}
	if cfg.FailFirst < 0 {
		return nil, fmt.Errorf("notification sink: fail first %d: want 0 or more", cfg.FailFirst)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{url: url, cfg: cfg, logger: logger, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5171)), failLeft: cfg.FailFirst,
		calls: map[string][]Call{}, stopped: make(chan struct{}), mode: ModeOK, release: make(chan struct{}), held: make(chan struct{})}, nil
}

// shut closes the server, if it has one, and says so.
func (s *Sink) shut() error {
	var err error
	if s.srv != nil {
		err = s.srv.Close()
		_ = s.ln.Close() // already closed if Serve had taken it
	}
	s.stopOnce.Do(func() {
		close(s.stopped)
		s.SetMode(ModeOK) // lets hung POSTs go
	})
	return err
}

// Stopped is closed once the sink refuses connections: after Close, or
// once Start's context has ended and the sink has acted on it.
func (s *Sink) Stopped() <-chan struct{} { return s.stopped }

// URL is the sink's base, "http://127.0.0.1:port".
func (s *Sink) URL() string { return s.url }

// URI is the notification URI to hand the frontend for one operation.
func (s *Sink) URI(label string) string { return s.url + "/notify/" + label }

// Close stops the sink at once.
func (s *Sink) Close() error {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	if err := s.shut(); err != nil {
		return fmt.Errorf("closing the notification sink: %w", err)
	}
	return nil
}

func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, ControlPath) {
		s.control(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "notifications are POSTed", http.StatusMethodNotAllowed)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var status arm.OperationStatus
	if err := json.Unmarshal(raw, &status); err != nil {
		http.Error(w, "body is not an operation status: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !s.hang(r.Context()) {
		return // the caller gave up: nothing was answered
	}
	s.mu.Lock()
	s.attempts++
	var fail bool
	answer := http.StatusOK
	switch {
	case s.failLeft > 0:
		s.failLeft--
		fail, answer = true, http.StatusInternalServerError
	case s.mode == ModeRefuse:
		fail, answer = true, http.StatusForbidden
	default:
		fail = s.cfg.FailRate > 0 && s.rng.Float64() < s.cfg.FailRate
		if fail {
			answer = http.StatusInternalServerError
		}
	}
	if fail {
		s.failures++
	}
	s.calls[r.URL.Path] = append(s.calls[r.URL.Path], Call{Status: answer, Body: status})
	if s.arrived != nil {
		close(s.arrived)
		s.arrived = nil
	}
	s.mu.Unlock()
	if fail {
		msg := "simulated ARM failure"
		if answer == http.StatusForbidden {
			msg = "simulated ARM refusal"
		}
		http.Error(w, msg, answer)
		return
	}
	s.logger.InfoContext(r.Context(), "ARM notification received", "path", r.URL.Path, "operation", status.Name, "status", status.Status)
	w.WriteHeader(http.StatusOK)
}

// FailNext answers the next n valid POSTs 500, whatever came before.
func (s *Sink) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLeft = max(n, 0)
}

// Calls returns the valid POSTs made to uri, failed ones included, in
// arrival order.
func (s *Sink) Calls(uri string) ([]Call, error) {
	path, ok := strings.CutPrefix(uri, s.url)
	if !ok {
		return nil, fmt.Errorf("notification URI %q is not one of the sink at %s", uri, s.url)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls[path]...), nil
}

// Delivered returns the statuses answered 200 at uri, in arrival order.
func (s *Sink) Delivered(uri string) ([]arm.ProvisioningState, error) {
	calls, err := s.Calls(uri)
	if err != nil {
		return nil, err
	}
	var out []arm.ProvisioningState
	for _, c := range calls {
		if c.Status == http.StatusOK {
			out = append(out, c.Body.Status)
		}
	}
	return out, nil
}

// Notified reports whether a terminal status was delivered at uri; a URI
// of another host was never notified here.
func (s *Sink) Notified(uri string) bool {
	got, err := s.Delivered(uri)
	if err != nil {
		return false
	}
	for _, st := range got {
		if st.IsTerminal() {
			return true
		}
	}
	return false
}

// AwaitNotified waits until a terminal status was delivered at uri,
// looking again at every POST that arrives, or until ctx is done.
func (s *Sink) AwaitNotified(ctx context.Context, uri string) error {
	for {
		s.mu.Lock()
		if s.arrived == nil {
			s.arrived = make(chan struct{})
		}
		arrived := s.arrived
		s.mu.Unlock()
		if s.Notified(uri) {
			return nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return fmt.Errorf("waiting for a terminal notification at %s: %w", uri, context.Cause(ctx))
		}
	}
}

// Counts returns how many valid POSTs arrived and how many were failed on
// purpose.
func (s *Sink) Counts() (attempts, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts, s.failures
}
