package triggerhost

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// route is one httpTrigger's URL template under the route prefix, matched
// the way ASP.NET routing matches function routes: literal segments ignore
// case, {name} (with any :constraint) takes one segment, {name?} may be
// missing at the end, {*name} takes the rest.
type route struct {
	function string
	methods  []string // empty: any method
	template string
	segments []routeSegment
	// forward replays the request as is; otherwise it travels in an
	// invocation envelope (Data.<trigger>) and the answer comes back
	// through the output binding named output.
	forward bool
	trigger string
	output  string
}

type routeSegment struct {
	literal  string
	param    string
	optional bool
	catchAll bool
}

func parseRoute(fn functionapp.Function, prefix string) (route, error) {
	b := fn.Trigger()
	tmpl := "/" + strings.Trim(strings.Trim(prefix, "/")+"/"+b.Route, "/")
	r := route{function: fn.Name, methods: b.Methods, template: tmpl, trigger: b.Name}
	for _, ob := range fn.Bindings {
		if ob.Type == functionapp.TypeHTTP && ob.Direction == "out" {
			r.output = ob.Name
		}
	}
	parts := strings.Split(strings.Trim(tmpl, "/"), "/")
	for i, p := range parts {
		if p == "" {
			return route{}, fmt.Errorf("function %s: route %q has an empty segment", fn.Name, b.Route)
		}
		if !strings.HasPrefix(p, "{") {
			if strings.ContainsAny(p, "{}") {
				return route{}, fmt.Errorf("function %s: route segment %q mixes text and parameters, which this host does not support", fn.Name, p)
			}
			r.segments = append(r.segments, routeSegment{literal: p})
			continue
		}
		if !strings.HasSuffix(p, "}") {
			return route{}, fmt.Errorf("function %s: route segment %q: unbalanced braces", fn.Name, p)
		}
		name := p[1 : len(p)-1]
		seg := routeSegment{}
		if strings.HasPrefix(name, "*") {
			seg.catchAll, name = true, strings.TrimLeft(name, "*")
		}
		if strings.HasSuffix(name, "?") {
			seg.optional, name = true, strings.TrimSuffix(name, "?")
		}
		name, _, _ = strings.Cut(name, ":")
		name, _, _ = strings.Cut(name, "=")
		if name == "" {
			return route{}, fmt.Errorf("function %s: route segment %q has no parameter name", fn.Name, p)
		}
		last := i == len(parts)-1
		if (seg.catchAll || seg.optional) && !last {
			return route{}, fmt.Errorf("function %s: route segment %q may only come last", fn.Name, p)
		}
		seg.param = name
		r.segments = append(r.segments, seg)
	}
	return r, nil
}

// match reports whether the path fits the template, with the values of
// its parameters.
func (r route) match(path string) (map[string]string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) == 1 && parts[0] == "" {
		parts = nil
	}
	params := map[string]string{}
	for i, seg := range r.segments {
		if seg.catchAll {
			params[seg.param] = strings.Join(parts[min(i, len(parts)):], "/")
			return params, true
		}
		if i >= len(parts) {
			return params, seg.optional && i == len(parts)
		}
		if seg.literal != "" {
			if !strings.EqualFold(seg.literal, parts[i]) {
				return nil, false
			}
			continue
		}
		params[seg.param] = parts[i]
	}
	return params, len(parts) == len(r.segments)
}

func (r route) allows(method string) bool {
	return len(r.methods) == 0 || slices.Contains(r.methods, method)
}
