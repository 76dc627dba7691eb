package csfaults

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
)

// IDlessCache is a response cache in front of Clusters Service keyed
// without the object's id: a GET's key is its path with every object id
// made {id} and its query without the search (which names ids). The
// first successful answer for a key is served to every later GET of that
// key until Reset: cluster A's genuine status answers the read of
// cluster B's, A's list the search for B. It is deterministic: which
// answer a key holds depends only on the order of the requests. Writes,
// error answers and the simulator's own routes pass uncached.
type IDlessCache struct {
	next http.Handler

	mu      sync.Mutex
	entries map[string]cachedAnswer

	misanswered atomic.Int64
}

type cachedAnswer struct {
	path   string // the request the answer was for
	status int
	header http.Header
	body   []byte
}

// NewIDlessCache caches next's answers.
func NewIDlessCache(next http.Handler) *IDlessCache {
	return &IDlessCache{next: next, entries: map[string]cachedAnswer{}}
}

// ServeHTTP answers from the cache, filling it from next.
func (c *IDlessCache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.Answer(w, r) {
		c.next.ServeHTTP(w, r)
	}
}

// Answer answers r if the cache stands for it (a GET under /api/), as
// csfake.CS.Front wants: false leaves r to whoever is behind.
func (c *IDlessCache) Answer(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/") {
		return false
	}
	key := IDlessKey(r.URL)
	c.mu.Lock()
	a, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		rec := httptest.NewRecorder()
		c.next.ServeHTTP(rec, r)
		a = cachedAnswer{path: r.URL.RequestURI(), status: rec.Code, header: rec.Header().Clone(), body: rec.Body.Bytes()}
		if a.status >= 200 && a.status < 300 {
			c.mu.Lock()
			if first, raced := c.entries[key]; raced {
				a = first
			} else {
				c.entries[key] = a
			}
			c.mu.Unlock()
		}
	}
	if a.path != r.URL.RequestURI() {
		c.misanswered.Add(1)
	}
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
	return true
}

// Misanswered is how many GETs got an answer cached for another request.
func (c *IDlessCache) Misanswered() int64 { return c.misanswered.Load() }

// Reset empties the cache.
func (c *IDlessCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}

// idSegments are the collections whose next path segment is an object's
// id.
var idSegments = map[string]bool{"clusters": true, "node_pools": true, "external_auths": true,
	"break_glass_credentials": true, "upgrade_policies": true, "inflight_checks": true, "versions": true}

// IDlessKey is the cache's key for u: its path with ids made {id}, its
// query without search.
func IDlessKey(u *url.URL) string {
	segs := strings.Split(u.Path, "/")
	for i := 1; i < len(segs); i++ {
		if idSegments[segs[i-1]] && segs[i] != "" {
			segs[i] = "{id}"
		}
	}
	q := u.Query()
	q.Del("search")
	return strings.Join(segs, "/") + "?" + q.Encode()
}
