package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// adminRoute is one control of the admin API, as GET /_sim/ lists it.
type adminRoute struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body,omitempty"`
	About  string `json:"about"`
}

// adminRoutes is the scenario-control API. It sees no latency, faults or
// ledger, so a test can always steer the simulator. Bodies are JSON;
// durations are Go duration strings ("90s"). GET /_sim/ lists every route
// registered here with its body and what it does (docs/simulator.md has
// the same list, held to it by a test).
//
// {key} is a cluster's CS ID, CS name or ARM resource name; a failure for
// an object that does not exist yet fires when it is created.
func (s *Simulator) adminRoutes() *http.ServeMux {
	m := http.NewServeMux()
	var index []adminRoute
	add := func(method, path, body, about string, h http.HandlerFunc) {
		m.HandleFunc(method+" "+path, h)
		index = append(index, adminRoute{Method: method, Path: path, Body: body, About: about})
	}
	add("GET", "/_sim/ledger", "", "request counts per CS route, faults included", func(w http.ResponseWriter, r *http.Request) {
		s.adminReply(w, r, s.Ledger())
	})
	add("DELETE", "/_sim/ledger", "", "reset the request counts", func(w http.ResponseWriter, r *http.Request) {
		s.ResetLedger()
		w.WriteHeader(http.StatusNoContent)
	})
	add("GET", "/_sim/durations", "", "phase durations of the state machines", func(w http.ResponseWriter, r *http.Request) {
		s.adminReply(w, r, s.Durations().Map())
	})
	add("PUT", "/_sim/durations", `{"cluster_installing":"30s",...}`, "change some phase durations (the others stay)", s.putDurations)
	add("GET", "/_sim/faults", "", "the random faults in force", func(w http.ResponseWriter, r *http.Request) {
		s.adminReply(w, r, s.Faults())
	})
	add("PUT", "/_sim/faults", `{"error_rate":0.1,"error_status":503,"throttle_rate":0,"hang_rate":0}`,
		"answer that fraction of CS requests with error_status, 429, or never", func(w http.ResponseWriter, r *http.Request) {
			var f Faults
			if s.adminDecode(w, r, &f) && s.adminCheck(w, r, s.SetFaults(f)) {
				s.adminReply(w, r, s.Faults())
			}
		})
	add("POST", "/_sim/faults/next", `{"count":2,"status":503}`, "answer the next count CS requests with status", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Count  int `json:"count"`
			Status int `json:"status"`
		}
		if s.adminDecode(w, r, &in) && s.adminCheck(w, r, s.FailNext(in.Count, in.Status)) {
			s.adminReply(w, r, in)
		}
	})
	add("GET", "/_sim/latency", "", "the latency added to every CS request", func(w http.ResponseWriter, r *http.Request) {
		s.adminReply(w, r, latencyJSON(s.Latency()))
	})
	add("PUT", "/_sim/latency", `{"fixed":"20ms","jitter":"10ms"}`, "add fixed latency plus uniform jitter to every CS request", s.putLatency)
	add("POST", "/_sim/advance", `{"by":"5m"}`, "move the simulated clock forward", s.postAdvance)
	add("POST", "/_sim/clusters/{key}/fail", `{"code":"OCM4001","message":"","failed_checks":2,"check_errors":[]}`,
		"fail the cluster where it would start installing (now, or when it is created)", func(w http.ResponseWriter, r *http.Request) {
			var f ClusterFailure
			if !s.adminDecode(w, r, &f) {
				return
			}
			applied, err := s.FailCluster(r.PathValue("key"), f)
			if s.adminCheck(w, r, err) {
				s.adminReply(w, r, map[string]bool{"applied": applied})
			}
		})
	add("POST", "/_sim/clusters/{key}/node_pools/{id}/fail", `{"state":"recoverable_error","message":"..."}`,
		"fail the cluster's node pool id (now, or when it is created)", func(w http.ResponseWriter, r *http.Request) {
			var f NodePoolFailure
			if !s.adminDecode(w, r, &f) {
				return
			}
			applied, err := s.FailNodePool(r.PathValue("key"), r.PathValue("id"), f)
			if s.adminCheck(w, r, err) {
				s.adminReply(w, r, map[string]bool{"applied": applied})
			}
		})
	add("POST", "/_sim/clusters/{key}/external_auths/{id}/fail", `{"message":"..."}`,
		"fail the cluster's external auth id (now, or when it is created)", func(w http.ResponseWriter, r *http.Request) {
			var f ExternalAuthFailure
			if !s.adminDecode(w, r, &f) {
				return
			}
			applied, err := s.FailExternalAuth(r.PathValue("key"), r.PathValue("id"), f)
			if s.adminCheck(w, r, err) {
				s.adminReply(w, r, map[string]bool{"applied": applied})
			}
		})
	add("POST", "/_sim/clusters/{key}/upgrade/fail", `{"message":"...","cancel":false}`,
		"fail (or with cancel, cancel) the cluster's control plane upgrade under way, or else its next one", s.postUpgradeFailure)
	add("POST", "/_sim/clusters/{key}/node_pools/{id}/upgrade/fail", `{"message":"...","cancel":false}`,
		"fail (or with cancel, cancel) the node pool's upgrade under way, or else its next one", s.postUpgradeFailure)
	listing := append([]adminRoute{{Method: "GET", Path: "/_sim/", About: "this list"}}, index...)
	m.HandleFunc("GET /_sim/{$}", func(w http.ResponseWriter, r *http.Request) {
		s.adminReply(w, r, map[string]any{"routes": listing, "docs": "docs/simulator.md"})
	})
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.notFound(w, r, "No simulator control at '%s %s' (GET /_sim/ lists them)", r.Method, r.URL.Path)
	})
	return m
}

func (s *Simulator) putDurations(w http.ResponseWriter, r *http.Request) {
	var in map[string]string
	if !s.adminDecode(w, r, &in) {
		return
	}
	d := s.Durations()
	for name, v := range in {
		dur, err := time.ParseDuration(v)
		if err != nil {
			s.badRequest(w, r, "duration %s: %v", name, err)
			return
		}
		if !s.adminCheck(w, r, d.Set(name, dur)) {
			return
		}
	}
	s.SetDurations(d)
	s.adminReply(w, r, d.Map())
}

type latencyBody struct {
	Fixed  string `json:"fixed"`
	Jitter string `json:"jitter"`
}

func latencyJSON(l Latency) latencyBody {
	return latencyBody{Fixed: l.Fixed.String(), Jitter: l.Jitter.String()}
}

func (s *Simulator) putLatency(w http.ResponseWriter, r *http.Request) {
	var in latencyBody
	if !s.adminDecode(w, r, &in) {
		return
	}
	var l Latency
	for _, f := range []struct {
		name, value string
		dst         *time.Duration
	}{{"fixed", in.Fixed, &l.Fixed}, {"jitter", in.Jitter, &l.Jitter}} {
		if f.value == "" {
			continue
		}
		d, err := time.ParseDuration(f.value)
		if err != nil {
			s.badRequest(w, r, "latency %s: %v", f.name, err)
			return
		}
		*f.dst = d
	}
	if s.adminCheck(w, r, s.SetLatency(l)) {
		s.adminReply(w, r, latencyJSON(s.Latency()))
	}
}

func (s *Simulator) postAdvance(w http.ResponseWriter, r *http.Request) {
	var in struct {
		By string `json:"by"`
	}
	if !s.adminDecode(w, r, &in) {
		return
	}
	d, err := time.ParseDuration(in.By)
	if err != nil || d < 0 {
		s.badRequest(w, r, "advance: 'by' must be a non-negative duration, got %q", in.By)
		return
	}
	s.Advance(d)
	s.adminReply(w, r, map[string]string{"advanced": d.String()})
}

// adminDecode reads a strict JSON body; false means an error was sent.
func (s *Simulator) adminDecode(w http.ResponseWriter, r *http.Request, dst any) bool {
	data, err := readBody(r, false)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		s.badRequest(w, r, "request body: %v", err)
		return false
	}
	return true
}

// adminCheck sends err as a 400; false means it did.
func (s *Simulator) adminCheck(w http.ResponseWriter, r *http.Request, err error) bool {
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return false
	}
	return true
}

func (s *Simulator) adminReply(w http.ResponseWriter, r *http.Request, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, fmt.Sprintf("marshal: %v", err))
		return
	}
	writeJSON(w, http.StatusOK, data)
}
