package dst

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// coverage is what a run (or many) exercised: the faults that answered
// a request, by kind and route, the requests the frontend made and the
// terminal states the engine wrote, by request and kind.
type coverage struct {
	mu    sync.Mutex
	count map[string]int
}

func newCoverage() *coverage { return &coverage{count: map[string]int{}} }

func (c *coverage) add(key string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count[key] += n
}

// fault counts a request a fault answered, by the route it read.
func (c *coverage) fault(kind string, req *http.Request) {
	route := "-"
	if req != nil {
		route = routeOf(req)
	}
	c.add("fault "+kind+" × "+route, 1)
}

func (c *coverage) action(name string, err error) {
	if err != nil {
		c.add("refused "+name, 1)
		return
	}
	c.add("request "+name, 1)
}

// terminal counts a terminal write by request, kind and state.
func (c *coverage) terminal(request, kind, state string) {
	c.add(fmt.Sprintf("terminal %s %s %s", request, kind, state), 1)
}

// merge adds another run's counts.
func (c *coverage) merge(o *coverage) {
	o.mu.Lock()
	counts := maps.Clone(o.count)
	o.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range counts {
		c.count[k] += v
	}
}

// table is the counts, one line each, sorted.
func (c *coverage) table() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c.count)) {
		out = append(out, fmt.Sprintf("%-70s %d", k, c.count[k]))
	}
	return out
}

// routeOf is a request's method and route with its ids left out.
func routeOf(req *http.Request) string {
	parts := strings.Split(req.URL.Path, "/")
	for i, p := range parts {
		if i > 0 && (parts[i-1] == "clusters" || parts[i-1] == "node_pools" || parts[i-1] == "external_auths" ||
			parts[i-1] == "break_glass_credentials" || parts[i-1] == "upgrade_policies" || parts[i-1] == "control_plane_upgrade_policies") {
			parts[i] = "{id}"
		}
		_ = p
	}
	return req.Method + " " + strings.Join(parts, "/")
}
