package testsupport

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

// HangProxy stands between a Clusters Service client and the simulator on
// 127.0.0.1. A request that names a sick key in its path, its (unescaped)
// search or its body is accepted and never answered, as a CS object stuck
// behind a dead backend: the client has to give up. Held requests are
// released when the test ends.
type HangProxy struct {
	URL   string
	close func()

	mu     sync.Mutex
	sick   []string
	held   map[string]int // requests held, by sick key
	total  int
	onHang func()
}

// NewHangProxy proxies to target until the test ends.
func NewHangProxy(t testing.TB, target string) *HangProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &HangProxy{held: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		search, _ := url.QueryUnescape(r.URL.RawQuery)
		if p.match(r.URL.Path + "?" + search + " " + string(body)) {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	var once sync.Once
	p.close = func() { once.Do(func() { close(done); srv.Close() }) }
	t.Cleanup(p.close)
	p.URL = srv.URL
	return p
}

// Close releases the held requests and stops the proxy: from then on its
// URL refuses connections, as a Clusters Service that is down.
func (p *HangProxy) Close() { p.close() }

func (p *HangProxy) match(s string) bool {
	p.mu.Lock()
	var onHang func()
	hit := false
	for _, k := range p.sick {
		if strings.Contains(s, k) {
			p.held[k]++
			p.total++
			hit, onHang = true, p.onHang
			break
		}
	}
	p.mu.Unlock()
	if onHang != nil {
		onHang()
	}
	return hit
}

// Hang holds every later request that names one of keys.
func (p *HangProxy) Hang(keys ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sick = append(p.sick, keys...)
}

// Heal answers every request from now on.
func (p *HangProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sick = nil
}

// OnHang runs f as each held request starts hanging.
func (p *HangProxy) OnHang(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onHang = f
}

// HeldFor is how many requests about key were held so far.
func (p *HangProxy) HeldFor(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[key]
}

// Held is how many requests were held so far.
func (p *HangProxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}
