package csfaults

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// SlowPost is a Clusters Service that takes longer to accept a POST than
// the client waits: the client gets a gateway's 504 (no word of CS's),
// and the POST reaches CS later, when Land says so. It is the race of a
// customer's delete with its create's POST.
type SlowPost struct {
	next   http.Handler
	prefix string

	mu   sync.Mutex
	held []*http.Request
	body [][]byte
}

// NewSlowPost holds the POSTs under the path prefix in front of next.
func NewSlowPost(next http.Handler, prefix string) *SlowPost {
	return &SlowPost{next: next, prefix: prefix}
}

func (s *SlowPost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, s.prefix) {
		s.next.ServeHTTP(w, r)
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	s.mu.Lock()
	s.held = append(s.held, r.Clone(context.Background())) // it outlives the client's request
	s.body = append(s.body, b)
	s.mu.Unlock()
	writeBody(w, http.StatusGatewayTimeout, "text/html", `<html><body><h1>504 Gateway Time-out</h1></body></html>`)
}

// Held is how many POSTs wait to land.
func (s *SlowPost) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// Land hands the held POSTs to CS, in the order they came, and returns
// CS's status for each.
func (s *SlowPost) Land() []int {
	s.mu.Lock()
	held, body := s.held, s.body
	s.held, s.body = nil, nil
	s.mu.Unlock()
	codes := make([]int, len(held))
	for i, r := range held {
		r.Body = io.NopCloser(bytes.NewReader(body[i]))
		r.ContentLength = int64(len(body[i]))
		rec := httptest.NewRecorder()
		s.next.ServeHTTP(rec, r)
		codes[i] = rec.Code
	}
	return codes
}
