package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
)

// healthChecks are what parts of the app add to the health route's body.
type healthChecks struct {
	mu     sync.Mutex
	checks map[string]func() any
}

// reservedHealthKeys are the body's own fields, which a check must not
// replace: a probe that reads "status" keeps reading "ok".
var reservedHealthKeys = []string{"status", "functions"}

// HealthCheck adds what check reports to the health route's body under
// name, so that the host's health probe (and a person) sees how that part
// is doing: the poll timer reports its last tick. The route still answers
// 200 with "status": "ok", whatever a check says: the host takes any
// answer as alive, and what is wedged is for the probe's reader to judge
// from the check (docs/functions.md).
func (s *Server) HealthCheck(name string, check func() any) error {
	if name == "" || slices.Contains(reservedHealthKeys, name) || check == nil {
		return fmt.Errorf("health check %q: want a name other than %v and a non-nil check", name, reservedHealthKeys)
	}
	h := &s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checks == nil {
		h.checks = map[string]func() any{}
	}
	if _, dup := h.checks[name]; dup {
		return fmt.Errorf("health check %q is already registered", name)
	}
	h.checks[name] = check
	return nil
}

// healthBody is the health route's answer: status, the functions, and
// each check's report.
func (s *Server) healthBody() []byte {
	body := map[string]any{"status": "ok", "functions": s.names()}
	s.health.mu.Lock()
	checks := maps.Clone(s.health.checks)
	s.health.mu.Unlock()
	for name, check := range checks {
		body[name] = check()
	}
	b, _ := json.Marshal(body)
	return b
}

// serveHealth answers the host's readiness ping; any response counts, but
// a body listing the functions and the checks helps a person checking the
// deployment, and a probe watching the timer.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, _ *entry) {
	writeJSON(w, http.StatusOK, s.healthBody())
}
