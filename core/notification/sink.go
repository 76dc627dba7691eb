package notification

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

// SinkConfig shapes a Sink.
type SinkConfig struct {
	// FailRate is the share of POSTs answered 500, in [0,1), so a run can
	// exercise the notifier's retries; 0 answers every valid POST 200.
	FailRate float64
	// Seed makes the choice of failed POSTs repeatable.
	Seed uint64
	// Logger hears of each delivered notification; nil discards.
	Logger *slog.Logger
}

// Sink stands in for ARM's async-notification endpoint on a loopback port,
// so local runs (`hcpops dev`, the soak) can see what the notifier sent
// without reaching ARM.
type Sink struct {
	url    string
	cfg    SinkConfig
	logger *slog.Logger
	srv    *http.Server
	// stopWatch releases the ctx watch that closes the server.
	stopWatch func() bool

	mu        sync.Mutex
	rng       *rand.Rand
	attempts  int
	failures  int
	delivered map[string][]arm.ProvisioningState // by URI path: the statuses answered 200
}

// StartSink serves a sink on a free 127.0.0.1 port until ctx is done or
// Close is called.
func StartSink(ctx context.Context, cfg SinkConfig) (*Sink, error) {
	if cfg.FailRate < 0 || cfg.FailRate >= 1 {
		return nil, fmt.Errorf("notification sink: failure rate %v: want [0,1)", cfg.FailRate)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("notification sink: %w", err)
	}
	s := &Sink{
		url: "http://" + ln.Addr().String(), cfg: cfg, logger: logger,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x5171)), delivered: map[string][]arm.ProvisioningState{},
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("notification sink stopped", "error", err)
		}
	}()
	s.stopWatch = context.AfterFunc(ctx, func() { _ = s.srv.Close() })
	return s, nil
}

// URL is the sink's base, "http://127.0.0.1:port".
func (s *Sink) URL() string { return s.url }

// URI is the notification URI to hand the frontend for one operation.
func (s *Sink) URI(label string) string { return s.url + "/notify/" + label }

// Close stops the sink at once.
func (s *Sink) Close() error {
	s.stopWatch()
	if err := s.srv.Close(); err != nil {
		return fmt.Errorf("closing the notification sink: %w", err)
	}
	return nil
}

func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	s.mu.Lock()
	s.attempts++
	fail := s.cfg.FailRate > 0 && s.rng.Float64() < s.cfg.FailRate
	if fail {
		s.failures++
	} else {
		s.delivered[r.URL.Path] = append(s.delivered[r.URL.Path], status.Status)
	}
	s.mu.Unlock()
	if fail {
		http.Error(w, "simulated ARM failure", http.StatusInternalServerError)
		return
	}
	s.logger.Info("ARM notification received", "path", r.URL.Path, "operation", status.Name, "status", status.Status)
	w.WriteHeader(http.StatusOK)
}

// Delivered returns the statuses answered 200 at uri, in arrival order.
func (s *Sink) Delivered(uri string) ([]arm.ProvisioningState, error) {
	path, ok := strings.CutPrefix(uri, s.url)
	if !ok {
		return nil, fmt.Errorf("notification URI %q is not one of the sink at %s", uri, s.url)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]arm.ProvisioningState(nil), s.delivered[path]...), nil
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

// Counts returns how many valid POSTs arrived and how many were failed on
// purpose.
func (s *Sink) Counts() (attempts, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts, s.failures
}
