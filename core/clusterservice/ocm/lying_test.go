package ocm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

// listLiar stands in front of the simulator and rewrites the pages of
// its list answers with lie, when set.
type listLiar struct {
	sim *simulator.Simulator
	mu  sync.Mutex
	lie func(page map[string]json.RawMessage, items []map[string]any) []map[string]any
}

func (l *listLiar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	l.sim.ServeHTTP(rec, r)
	l.mu.Lock()
	lie := l.lie
	l.mu.Unlock()
	body := rec.Body.Bytes()
	var page map[string]json.RawMessage
	var items []map[string]any
	if lie != nil && r.Method == http.MethodGet && rec.Code == 200 && json.Unmarshal(body, &page) == nil && page["items"] != nil &&
		json.Unmarshal(page["items"], &items) == nil {
		items = lie(page, items)
		page["items"], _ = json.Marshal(items)
		if _, set := page["size"]; set {
			page["size"], _ = json.Marshal(len(items))
		}
		body, _ = json.Marshal(page)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

func (l *listLiar) set(lie func(map[string]json.RawMessage, []map[string]any) []map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lie = lie
}

// copyWith is a deep copy of item with its state (and status state) set.
func copyWith(item map[string]any, state string) map[string]any {
	b, _ := json.Marshal(item)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if _, ok := out["state"]; ok {
		out["state"] = state
	}
	if st, ok := out["status"].(map[string]any); ok {
		if v, ok := st["state"].(map[string]any); ok { // node pools, external auths
			if v["value"] == state {
				state = "error" // a copy that differs
			}
			v["value"] = state
		} else {
			st["state"] = state
		}
	}
	return out
}

// lies are the ways a list breaks its contract.
var lies = map[string]func(map[string]json.RawMessage, []map[string]any) []map[string]any{
	"an id twice, the copy ready": func(_ map[string]json.RawMessage, items []map[string]any) []map[string]any {
		for _, it := range append([]map[string]any(nil), items...) {
			items = append(items, copyWith(it, "ready"))
		}
		return items
	},
	"an item not asked for": func(_ map[string]json.RawMessage, items []map[string]any) []map[string]any {
		extra := copyWith(items[0], "ready")
		extra["id"] = strings.Repeat("9", 32)
		return append(items, extra)
	},
	"more items than the size asked": func(_ map[string]json.RawMessage, items []map[string]any) []map[string]any {
		for len(items) <= 5 {
			items = append(items, items[0])
		}
		return items
	},
	"a total beyond what the ids can match": func(page map[string]json.RawMessage, items []map[string]any) []map[string]any {
		page["total"] = json.RawMessage("1000000")
		return items
	},
}

func newLiar(t *testing.T) (*listLiar, *Client, *env) {
	t.Helper()
	e := newEnv(t, defaultConfig())
	l := &listLiar{sim: e.sim}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, connect(t, Config{URL: srv.URL}), e
}

// TestLyingClusterListIsNotEvidence: a cluster list that breaks its
// contract is garbage: an error the caller logs, with none of its
// objects, which the caller then reads with their own GETs.
func TestLyingClusterListIsNotEvidence(t *testing.T) {
	l, c, e := newLiar(t)
	var hrefs []string
	for n := 1; n <= 3; n++ {
		if _, err := c.PostCluster(e.ctx, clusterSpec(n)); err != nil {
			t.Fatal(err)
		}
		hrefs = append(hrefs, cs.ClusterHref(clusterID(n)))
	}
	e.clock.Advance(2 * time.Minute) // installing
	if got, err := c.ListClustersByHref(e.ctx, hrefs); err != nil || len(got) != 3 {
		t.Fatalf("honest list: %d clusters, %v", len(got), err)
	}
	for name, lie := range lies {
		t.Run(name, func(t *testing.T) {
			l.set(lie)
			defer l.set(nil)
			got, err := c.ListClustersByHref(e.ctx, hrefs)
			if !errors.Is(err, cs.ErrInconsistentList) || len(got) != 0 {
				t.Fatalf("got %d clusters (%v), %v; want ErrInconsistentList and none", len(got), got, err)
			}
			if !strings.Contains(err.Error(), "search") || !strings.Contains(err.Error(), "page 1") {
				t.Errorf("the error does not name the call and page: %v", err)
			}
			for _, h := range hrefs { // what the GETs then say
				if st, err := c.GetClusterStatus(e.ctx, h); err != nil || st.State != cs.ClusterStateInstalling {
					t.Errorf("GET %s: %+v, %v", h, st, err)
				}
			}
		})
	}
}

// TestLyingChildListsAreNotEvidence: the same for node pools (searched by
// id) and external auths (a plain list: other items are expected, but an
// id twice with different content is not, nor a page over its size).
func TestLyingChildListsAreNotEvidence(t *testing.T) {
	l, c, e := newLiar(t)
	cluster := e.readyCluster(t, 1)
	np, err := c.PostNodePool(e.ctx, cluster, nodePoolSpec())
	if err != nil {
		t.Fatal(err)
	}
	ea, err := c.PostExternalAuth(e.ctx, cluster, cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://login.microsoftonline.com/t/v2.0", Audiences: []string{"aud"}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)
	npHrefs := []string{cs.NodePoolHref(cluster, np.ID)}
	eaHrefs := []string{cs.ExternalAuthHref(cluster, ea.ID)}
	l.set(lies["an id twice, the copy ready"])
	if got, err := c.ListNodePoolsByHref(e.ctx, cluster, npHrefs); !errors.Is(err, cs.ErrInconsistentList) || len(got) != 0 {
		t.Errorf("node pools: %v, %v; want ErrInconsistentList", got, err)
	}
	if got, err := c.ListExternalAuthsByHref(e.ctx, cluster, eaHrefs); !errors.Is(err, cs.ErrInconsistentList) || len(got) != 0 {
		t.Errorf("external auths: %v, %v; want ErrInconsistentList", got, err)
	}
	l.set(func(_ map[string]json.RawMessage, items []map[string]any) []map[string]any {
		for len(items) <= externalAuthPageSize {
			other := copyWith(items[0], "ready")
			other["id"] = fmt.Sprintf("other%03d", len(items))
			other["href"] = cs.ExternalAuthHref(cluster, other["id"].(string))
			items = append(items, other)
		}
		return items
	})
	if got, err := c.ListExternalAuthsByHref(e.ctx, cluster, eaHrefs); !errors.Is(err, cs.ErrInconsistentList) || len(got) != 0 {
		t.Errorf("external auths, a page over its size: %v, %v; want ErrInconsistentList", got, err)
	}
	l.set(func(_ map[string]json.RawMessage, items []map[string]any) []map[string]any {
		other := copyWith(items[0], "ready")
		other["id"] = "another"
		other["href"] = cs.ExternalAuthHref(cluster, "another")
		return append(items, other) // another external auth: a plain list has those
	})
	if got, err := c.ListExternalAuthsByHref(e.ctx, cluster, eaHrefs); err != nil || len(got) != 1 {
		t.Errorf("external auths with one more of the cluster's: %v, %v; want the one asked", got, err)
	}
}

// endlessCS answers every list with the same page: far more items than
// asked, a huge total, and never an end; pages counts the requests.
type endlessCS struct {
	page  []byte
	pages atomic.Int32
}

func newEndlessCS(items int) *endlessCS {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":"ClusterList","page":1,"size":%d,"total":1000000000,"items":[`, items)
	for i := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"kind":"Cluster","id":"%032d","href":"/api/aro_hcp/v1alpha1/clusters/%032d","state":"ready","status":{"kind":"ClusterStatus","state":"ready","description":"listed"}}`, i, i)
	}
	b.WriteString("]}")
	return &endlessCS{page: b.Bytes()}
}

func (e *endlessCS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e.pages.Add(1) > 20 { // a bound for the code before this test, which read every page
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ClusterList","page":21,"size":0,"total":1000000000,"items":[]}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(e.page)
}

// TestEndlessListIsBounded: a CS that ignores size=3, claims a huge total
// and sends 5,000 items a page costs one page request and memory bounded
// by what was asked, not by what it sends.
func TestEndlessListIsBounded(t *testing.T) {
	cs5000 := newEndlessCS(5000)
	srv := httptest.NewServer(cs5000)
	defer srv.Close()
	c := connect(t, Config{URL: srv.URL})
	hrefs := []string{cs.ClusterHref(clusterID(1)), cs.ClusterHref(clusterID(2)), cs.ClusterHref(clusterID(3))}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := c.ListClustersByHref(context.Background(), hrefs)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, cs.ErrInconsistentList) || len(got) != 0 {
		t.Errorf("got %d clusters, %v; want ErrInconsistentList", len(got), err)
	}
	if n := cs5000.pages.Load(); n != 1 {
		t.Errorf("%d page requests, want 1", n)
	}
	// One page of this CS is %d bytes; three clusters are a few KB. The
	// bound leaves room for the client's own buffers.
	const bound = 4 << 20
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the list allocated %d bytes against a page of %d bytes", alloc, len(cs5000.page))
	if alloc > bound {
		t.Errorf("the list allocated %d bytes (a page is %d bytes), want at most %d", alloc, len(cs5000.page), bound)
	}
}
