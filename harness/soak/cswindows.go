package soak

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/csfaults"
)

// csWindow is one window of the run in which something answers in
// Clusters Service's place: a misrouted CS (its own 404 for every object,
// empty lists) or a gateway (404s that are not CS's), from at after the
// start of the run, for length.
type csWindow struct {
	fault      csfaults.Fault
	at, length time.Duration
}

// csWindowsOf places the windows of a run: the misrouted one from 40% of
// the window the scenarios start in, the gateway one from 65%, each
// opening once a cluster delete and a create or update CS accepted are in
// flight (runWindows). A zero length leaves one out.
func csWindowsOf(duration, misrouted, gateway time.Duration) []csWindow {
	var out []csWindow
	if misrouted > 0 {
		out = append(out, csWindow{fault: csfaults.Misrouted, at: duration * 40 / 100, length: misrouted})
	}
	if gateway > 0 {
		out = append(out, csWindow{fault: csfaults.Gateway, at: duration * 65 / 100, length: gateway})
	}
	return out
}

// runWindows opens and closes proxy's windows until ctx is done. A window
// opens at its offset once ready says what it is about is in flight:
// cluster deletes whose 404s a window could fake, beside objects that must
// exist. (A window with only deletes in flight, for longer than a tick,
// is what the lifecycle cannot tell from a bulk delete:
// docs/arm.md#a-404-wave-is-not-evidence.)
func runWindows(ctx context.Context, proxy *csfaults.Proxy, windows []csWindow, start time.Time, ready func() bool, logger *slog.Logger) {
	defer proxy.Set(csfaults.Healthy)
	for _, w := range windows {
		sleep(ctx, time.Until(start.Add(w.at)))
		for ctx.Err() == nil && !ready() {
			sleep(ctx, observeEvery)
		}
		if ctx.Err() != nil {
			return
		}
		logger.InfoContext(ctx, "soak: clusters service fault window opens", "fault", w.fault.String(), "for", w.length,
			"after", time.Since(start).Round(time.Millisecond))
		proxy.Set(w.fault)
		sleep(ctx, w.length)
		proxy.Set(csfaults.Healthy)
		logger.InfoContext(ctx, "soak: clusters service fault window closes", "fault", w.fault.String())
	}
}

// csWitness stands right in front of the simulator, behind every proxy
// that lies or answers for it, and notes what CS itself said of each
// object: when it first answered 404 for it (the only evidence a delete
// may complete on) and every state it answered it in, and when (csword.go).
type csWitness struct {
	next http.Handler

	mu     sync.Mutex
	absent map[string]time.Time   // object href -> first 404 of CS's own
	words  map[string][]stateSeen // object href -> CS's answers, in order
}

// stateSeen is one answer of CS's about an object: the state and when.
type stateSeen struct {
	state string
	at    time.Time
}

func newCSWitness(next http.Handler) *csWitness {
	return &csWitness{next: next, absent: map[string]time.Time{}, words: map[string][]stateSeen{}}
}

func (c *csWitness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	read := r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/")
	// CS's own 404 to a DELETE is its word that the object is gone too:
	// the lifecycle may complete a delete on it, corroborated by a list.
	deleted := r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/")
	sw := &statusWriter{ResponseWriter: w, keep: read}
	c.next.ServeHTTP(sw, r)
	if !read && !deleted {
		return
	}
	now := time.Now()
	switch {
	case sw.status == http.StatusNotFound:
		href := strings.TrimSuffix(r.URL.Path, "/status")
		if kind, _ := cs.ParseHref(href); kind == cs.HrefOther {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.absent[href]; !ok {
			c.absent[href] = now
		}
	case read && sw.status >= 200 && sw.status < 300:
		states := objectStates(r.URL.Path, sw.body.Bytes())
		c.mu.Lock()
		defer c.mu.Unlock()
		for href, st := range states {
			c.words[href] = append(c.words[href], stateSeen{state: st, at: now})
		}
	}
}

// snapshot copies what CS answered 404 for, and when it first did.
func (c *csWitness) snapshot() map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]time.Time, len(c.absent))
	for k, v := range c.absent {
		out[k] = v
	}
	return out
}

// wordsSnapshot copies the states CS answered each object in.
func (c *csWitness) wordsSnapshot() map[string][]stateSeen {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]stateSeen, len(c.words))
	for k, s := range c.words {
		out[k] = slices.Clone(s)
	}
	return out
}
