// Package hang makes a dependency hang for tests: requests naming a sick key
// are held unanswered until their context ends, in a handler (Set) or a
// proxy on 127.0.0.1 (Proxy), so a test shows a hang costs only its work.
package hang

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Set holds the requests that name a sick key in their path, their
// (unescaped) search or their body: accepted and never answered, as a CS
// object stuck behind a dead backend, until the request's context ends
// (the client gives up) or Release. The rest go on to the handler it
// wraps. A hang is thus <-ctx.Done(): with the client's deadline on a
// fake clock (a synctest bubble) it costs no real time.
type Set struct {
	mu      sync.Mutex
	sick    []string
	held    map[string]int // requests held, by sick key
	total   int
	onHang  func()
	release chan struct{}
	once    sync.Once
}

// NewSet holds nothing until Hang names keys.
func NewSet() *Set { return &Set{held: map[string]int{}, release: make(chan struct{})} }

// Handler serves next, holding the requests about a sick key.
func (h *Set) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		search, _ := url.QueryUnescape(r.URL.RawQuery)
		if h.match(r.URL.Path + "?" + search + " " + string(body)) {
			select {
			case <-r.Context().Done():
			case <-h.release:
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Release lets every held request go, unanswered, now and from then on.
func (h *Set) Release() { h.once.Do(func() { close(h.release) }) }

func (h *Set) match(s string) bool {
	h.mu.Lock()
	var onHang func()
	hit := false
	for _, k := range h.sick {
		if strings.Contains(s, k) {
			h.held[k]++
			h.total++
			hit, onHang = true, h.onHang
			break
		}
	}
	h.mu.Unlock()
	if onHang != nil {
		onHang()
	}
	return hit
}

// Hang holds every later request that names one of keys.
func (h *Set) Hang(keys ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sick = append(h.sick, keys...)
}

// Heal answers every request from now on.
func (h *Set) Heal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sick = nil
}

// OnHang runs f as each held request starts hanging.
func (h *Set) OnHang(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onHang = f
}

// HeldFor is how many requests about key were held so far.
func (h *Set) HeldFor(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[key]
}

// Held is how many requests were held so far.
func (h *Set) Held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// Proxy is Set in front of a Clusters Service on 127.0.0.1 (the
// simulator), for end-to-end tests that reach it over a socket. Held
// requests are released when the test ends.
type Proxy struct {
	*Set
	URL   string
	close func()
}

// NewProxy proxies to target until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Set: NewSet()}
	srv := httptest.NewServer(p.Handler(httputil.NewSingleHostReverseProxy(u)))
	var once sync.Once
	p.close = func() { once.Do(func() { p.Release(); srv.Close() }) }
	t.Cleanup(p.close)
	p.URL = srv.URL
	return p
}

// Close releases the held requests and stops the proxy: from then on its
// URL refuses connections, as a Clusters Service that is down.
func (p *Proxy) Close() { p.close() }
