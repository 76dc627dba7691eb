package csfaults

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Scope narrows a fault to part of Clusters Service's traffic, the way
// real faults are shaped: one bad replica of three answers about a third
// of the requests (Share), a bad route one path prefix (Route), a bad
// handler one object kind (Kind), and a fault lasts a while (Until). The
// zero Scope is every request, for ever.
type Scope struct {
	// Share is the fraction of matching requests the fault answers; 0 (or
	// 1 and above) is all of them. The draws come from Rand, so a
	// deterministic simulation can drive it.
	Share float64
	Rand  rand.Source
	// Route, when set, is the path prefix the fault answers under.
	Route string
	// Kind, when set, is the object kind the fault answers for: the last
	// collection the path names ("clusters", "node_pools",
	// "external_auths").
	Kind string
	// Writes: a Misrouted fault answers writes too (a DELETE or PATCH meets
	// CS's own 404 and never reaches CS); by default they pass, as in Proxy.
	Writes bool
	// Until, when set, ends the fault at that time on Clock.
	Until time.Time
	Clock func() time.Time
}

// Scoped is a fault that answers in CS's place only for the requests its
// Scope picks; the rest go to next. Its answers are Proxy's.
type Scoped struct {
	next  http.Handler
	fault *Proxy
	scope Scope

	mu       sync.Mutex
	rnd      *rand.Rand
	answered atomic.Int64
}

// NewScoped answers with fault, within scope, in front of next.
func NewScoped(next http.Handler, fault Fault, scope Scope) *Scoped {
	p := New(next)
	p.Set(fault)
	s := &Scoped{next: next, fault: p, scope: scope}
	if scope.Rand != nil {
		s.rnd = rand.New(scope.Rand)
	}
	return s
}

// Answered is how many requests the fault answered.
func (s *Scoped) Answered() int64 { return s.answered.Load() }

// Picks reports whether the fault answers r (drawing its share).
func (s *Scoped) Picks(r *http.Request) bool {
	sc := s.scope
	switch {
	case !strings.HasPrefix(r.URL.Path, "/api/"):
		return false
	case sc.Route != "" && !strings.HasPrefix(r.URL.Path, sc.Route):
		return false
	case sc.Kind != "" && ObjectKind(r.URL.Path) != sc.Kind:
		return false
	case !sc.Until.IsZero() && sc.Clock != nil && !sc.Clock().Before(sc.Until):
		return false
	case sc.Share > 0 && sc.Share < 1:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.rnd == nil {
			s.rnd = rand.New(rand.NewPCG(1, 2))
		}
		return s.rnd.Float64() < sc.Share
	}
	return true
}

func (s *Scoped) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.Picks(r) {
		s.next.ServeHTTP(w, r)
		return
	}
	s.answered.Add(1)
	if s.scope.Writes && r.Method != http.MethodGet && s.fault.Fault() == Misrouted {
		writeOCMNotFound(w, r, s.answered.Load())
		return
	}
	s.fault.ServeHTTP(w, r)
}

// ObjectKind is the kind of object a CS path is about: the last
// collection it names ("clusters", "node_pools", "external_auths",
// "break_glass_credentials"), "" for none.
func ObjectKind(path string) string {
	kind := ""
	for _, seg := range strings.Split(path, "/") {
		switch seg {
		case "clusters", "node_pools", "external_auths", "break_glass_credentials":
			kind = seg
		}
	}
	return kind
}
