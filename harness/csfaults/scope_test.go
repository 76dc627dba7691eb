package csfaults

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func okCS(posted *int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			*posted++
			w.WriteHeader(http.StatusCreated)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Cluster","id":"abc"}`))
	})
}

func serveOn(h http.Handler, method, target string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(`{"id":"abc"}`)))
	return rec.Code
}

func TestScoped(t *testing.T) {
	const cluster = "/api/aro_hcp/v1alpha1/clusters/abc"
	const pool = cluster + "/node_pools/np"
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var posted int
	cases := []struct {
		name  string
		scope Scope
		// answered: requests of reqs the fault answers (404)
		reqs     []string
		answered int
	}{
		{"all", Scope{}, []string{cluster, pool, "/_sim/clock"}, 2},
		{"route", Scope{Route: cluster + "/node_pools"}, []string{cluster, pool}, 1},
		{"kind", Scope{Kind: "node_pools"}, []string{cluster, pool, pool + "/status"}, 2},
		{"ended", Scope{Until: now, Clock: clock}, []string{cluster, pool}, 0},
		{"running", Scope{Until: now.Add(time.Second), Clock: clock}, []string{cluster, pool}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewScoped(okCS(&posted), Misrouted, c.scope)
			n := 0
			for _, r := range c.reqs {
				if serveOn(s, http.MethodGet, r) == http.StatusNotFound {
					n++
				}
			}
			if n != c.answered || s.Answered() != int64(c.answered) {
				t.Errorf("answered %d (counted %d), want %d", n, s.Answered(), c.answered)
			}
		})
	}

	// A share is drawn from the source: the same seed, the same requests.
	draw := func(seed uint64) (n int, picks []bool) {
		s := NewScoped(okCS(&posted), Misrouted, Scope{Share: 1.0 / 3, Rand: rand.NewPCG(seed, 7)})
		for range 300 {
			bad := serveOn(s, http.MethodGet, cluster) == http.StatusNotFound
			picks = append(picks, bad)
			if bad {
				n++
			}
		}
		return n, picks
	}
	n1, p1 := draw(1)
	n2, p2 := draw(1)
	if n1 < 70 || n1 > 130 {
		t.Errorf("a third of 300 requests answered %d", n1)
	}
	if n1 != n2 || strings.Join(strs(p1), "") != strings.Join(strs(p2), "") {
		t.Errorf("the same seed drew differently: %d, %d", n1, n2)
	}

	// Writes pass a misroute unless it takes them too.
	if code := serveOn(NewScoped(okCS(&posted), Misrouted, Scope{}), http.MethodDelete, cluster); code != http.StatusOK {
		t.Errorf("misrouted DELETE = %d, want passed to CS", code)
	}
	if code := serveOn(NewScoped(okCS(&posted), Misrouted, Scope{Writes: true}), http.MethodDelete, cluster); code != http.StatusNotFound {
		t.Errorf("misrouted DELETE with Writes = %d, want CS's own 404", code)
	}
}

func strs(b []bool) []string {
	out := make([]string, len(b))
	for i, v := range b {
		out[i] = map[bool]string{true: "1", false: "0"}[v]
	}
	return out
}

func TestSlowPost(t *testing.T) {
	var posted int
	s := NewSlowPost(okCS(&posted), "/api/aro_hcp/v1alpha1/clusters")
	if code := serveOn(s, http.MethodPost, "/api/aro_hcp/v1alpha1/clusters"); code != http.StatusGatewayTimeout {
		t.Fatalf("slow POST = %d, want the gateway's 504", code)
	}
	if code := serveOn(s, http.MethodGet, "/api/aro_hcp/v1alpha1/clusters/abc"); code != http.StatusOK {
		t.Fatalf("GET = %d, want passed", code)
	}
	if posted != 0 || s.Held() != 1 {
		t.Fatalf("before Land: posted %d, held %d; want 0, 1", posted, s.Held())
	}
	if codes := s.Land(); len(codes) != 1 || codes[0] != http.StatusCreated || posted != 1 || s.Held() != 0 {
		t.Fatalf("Land = %v, posted %d, held %d; want one 201 reaching CS", codes, posted, s.Held())
	}
}
