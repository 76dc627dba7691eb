// Package simulator is an in-memory Clusters Service that speaks CS's wire
// format (ocm-sdk-go's own JSON, CS error bodies, list envelopes), so the
// real ocm client and the whole operation lifecycle can run offline and in
// tests. Object states follow timed state machines on an injectable clock;
// scenario controls (failures, latency, faults, a request ledger) are Go
// methods and a small admin API under /_sim/.
package simulator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice"
)

// Option configures a Simulator.
type Option func(*Simulator)

// WithClock replaces the wall clock of every state machine.
func WithClock(c clock.Clock) Option { return func(s *Simulator) { s.clock = c } }

// WithRandSource seeds every random choice (IDs, jitter, faults).
func WithRandSource(src rand.Source) Option { return func(s *Simulator) { s.rng = rand.New(src) } }

// WithDurations sets the phase durations.
func WithDurations(d Durations) Option { return func(s *Simulator) { s.durations = d } }

// WithPageSize sets the default list page size (CS uses 100).
func WithPageSize(n int) Option {
	return func(s *Simulator) {
		if n > 0 {
			s.pageSize = n
		}
	}
}

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Simulator) { s.logger = l } }

// Simulator is a stateful fake Clusters Service. It is safe for concurrent
// use.
type Simulator struct {
	clock    clock.Clock
	logger   *slog.Logger
	pageSize int

	rngMu sync.Mutex
	rng   *rand.Rand

	mu        sync.Mutex // guards everything below
	skew      time.Duration
	durations Durations
	seq       int
	clusters  map[string]*cluster
	versions  []clusterservice.Version
	armed     armedFailures

	faultMu sync.Mutex
	faults  Faults
	latency Latency
	next    []int // statuses forced on the next API requests

	ledger ledger

	api       *http.ServeMux
	admin     *http.ServeMux
	done      chan struct{}
	closeOnce sync.Once

	persist atomic.Pointer[persister] // set by Persist (persist.go)
}

// New builds a simulator; by default it uses the wall clock, a fixed seed
// and DefaultDurations.
func New(opts ...Option) *Simulator {
	s := &Simulator{
		clock:     clock.Real{},
		logger:    slog.New(slog.DiscardHandler),
		pageSize:  100,
		rng:       rand.New(rand.NewPCG(1, 2)),
		durations: DefaultDurations(),
		clusters:  map[string]*cluster{},
		versions:  DefaultVersions(),
		armed:     newArmedFailures(),
		ledger:    ledger{l: newLedgerCounts()},
		done:      make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.api = s.apiRoutes()
	s.admin = s.adminRoutes()
	return s
}

// Handler serves the CS API and the /_sim/ admin API.
func (s *Simulator) Handler() http.Handler { return s }

// ServeHTTP records each API request in the ledger, then applies latency and
// faults before the real handler runs. The admin API bypasses all three.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		s.admin.ServeHTTP(w, r)
		s.changed(r.Method)
		return
	}
	_, pattern := s.api.Handler(r)
	key := ledgerKey(r.Method, pattern)
	s.ledger.record(key, r.Method+" "+r.URL.Path)
	if !s.delay(r.Context()) {
		return
	}
	switch f := s.pickFault(); {
	case f == faultHang:
		s.ledger.fault(key)
		select {
		case <-r.Context().Done():
		case <-s.done:
			s.writeError(w, r, http.StatusServiceUnavailable, "Simulator closed during a simulated hang")
		}
		return
	case f != faultNone:
		s.ledger.fault(key)
		if f == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		s.writeError(w, r, f, fmt.Sprintf("Simulated fault: status %d", f))
		return
	}
	s.api.ServeHTTP(w, r)
	s.changed(r.Method)
}

// Close releases hung requests (with a 503) and cuts added latency short;
// the simulator keeps serving otherwise.
func (s *Simulator) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

// Start serves the simulator on addr (127.0.0.1 only; ":0"-style ports are
// fine) until ctx is done, and returns its base URL.
func (s *Simulator) Start(ctx context.Context, addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.ErrorContext(ctx, "cs simulator stopped", "addr", addr, "error", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}

// checkLoopback refuses anything but a 127.0.0.1 listen address: the
// simulator has no authentication.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return fmt.Errorf("listen address %q: host must be 127.0.0.1", addr)
	}
	return nil
}

// now is the simulated time: the clock plus any Advance.
func (s *Simulator) now() time.Time {
	return s.clock.Now().Add(s.skew)
}

// Advance moves simulated time forward, e.g. to fast-forward a local run
// that uses the wall clock.
func (s *Simulator) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skew += d
}

// Durations returns the current phase durations.
func (s *Simulator) Durations() Durations {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durations
}

// SetDurations replaces the phase durations for later transitions.
func (s *Simulator) SetDurations(d Durations) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.durations = d
}
