package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// sink stands in for ARM's notification endpoint and fails a share of the
// POSTs with 500, so the engine's notification retries are exercised.
type sink struct {
	url      string
	failRate float64
	srv      *http.Server

	mu        sync.Mutex
	rng       *rand.Rand
	attempts  int
	failures  int
	delivered map[string][]arm.ProvisioningState // by URI path: the statuses answered 200
}

func startSink(failRate float64, seed uint64) (*sink, error) {
	if failRate < 0 || failRate >= 1 {
		return nil, fmt.Errorf("notification failure rate %v: want [0,1)", failRate)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("notification sink: %w", err)
	}
	s := &sink{url: "http://" + ln.Addr().String(), failRate: failRate,
		rng: rand.New(rand.NewPCG(seed, 0x5171)), delivered: map[string][]arm.ProvisioningState{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) Close() error { return s.srv.Close() }

// uri is the notification URI of one operation the soak submits.
func (s *sink) uri(label string) string { return s.url + "/notify/" + label }

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "notifications are POSTed", http.StatusMethodNotAllowed)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	var status arm.OperationStatus
	if err := json.Unmarshal(raw, &status); err != nil {
		http.Error(w, "body is not an operation status: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.attempts++
	fail := s.rng.Float64() < s.failRate
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
	w.WriteHeader(http.StatusOK)
}

// received returns the statuses delivered to uri (200-answered POSTs).
func (s *sink) received(uri string) ([]arm.ProvisioningState, error) {
	path, ok := strings.CutPrefix(uri, s.url)
	if !ok {
		return nil, errors.New("not a URI of this sink")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]arm.ProvisioningState(nil), s.delivered[path]...), nil
}

func (s *sink) counts() (attempts, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts, s.failures
}

// shutdown stops the sink, letting a POST in flight finish.
func (s *sink) shutdown(ctx context.Context) { _ = s.srv.Shutdown(ctx) }
