package apptest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

// Sink is ARM's notification endpoint, on loopback.
type Sink struct {
	mu   sync.Mutex
	got  []arm.OperationStatus
	srv  *httptest.Server
	fail int // answer this many more requests with 500
}

// NewSink starts a Sink; it stops when t ends.
func NewSink(t testing.TB) *Sink {
	s := &Sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var st arm.OperationStatus
		_ = json.NewDecoder(r.Body).Decode(&st)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail > 0 {
			s.fail--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		s.got = append(s.got, st)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the Sink's base URL.
func (s *Sink) URL() string { return s.srv.URL }

// FailFirst makes the next n notifications fail with a 500.
func (s *Sink) FailFirst(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

// Got is every notification delivered, in order.
func (s *Sink) Got() []arm.OperationStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}
