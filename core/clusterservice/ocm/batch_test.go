package ocm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestIDSearch: both search forms, and a quote in an id doubled, as CS's
// search language escapes it.
func TestIDSearch(t *testing.T) {
	for _, tc := range []struct {
		form string
		ids  []string
		want string
	}{
		{IDSearchOr, []string{"a1"}, "id = 'a1'"},
		{IDSearchOr, []string{"a1", "b2", "c3"}, "id = 'a1' or id = 'b2' or id = 'c3'"},
		{IDSearchIn, []string{"a1"}, "id in ('a1')"},
		{IDSearchIn, []string{"a1", "b2"}, "id in ('a1', 'b2')"},
		{IDSearchOr, []string{"o'brien", "''"}, "id = 'o''brien' or id = ''''''"},
		{IDSearchIn, []string{"x'", "'y'z"}, "id in ('x''', '''y''z')"},
	} {
		c := &Client{idForm: tc.form}
		if got := c.idSearch(tc.ids); got != tc.want {
			t.Errorf("idSearch(%s, %q) = %q, want %q", tc.form, tc.ids, got, tc.want)
		}
	}
}

// TestListClustersByHref: one list request reads many clusters, in either
// search form, keyed by the hrefs asked for (either API prefix); clusters
// CS does not have are simply absent.
func TestListClustersByHref(t *testing.T) {
	for _, form := range []string{IDSearchOr, IDSearchIn} {
		t.Run(form, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.IDSearch = form
			e := newEnv(t, cfg)
			for n := 1; n <= 5; n++ {
				if _, err := e.client.PostCluster(e.ctx, clusterSpec(n)); err != nil {
					t.Fatalf("PostCluster %d: %v", n, err)
				}
			}
			e.clock.Advance(2 * time.Minute) // validating, pending: installing now
			mgmt := cs.ClustersMgmtPrefix + "/clusters/" + clusterID(4)
			hrefs := []string{cs.ClusterHref(clusterID(1)), cs.ClusterHref(clusterID(3)), cs.ClusterHref(clusterID(99)),
				cs.ClusterHref(clusterID(1)), mgmt}
			e.sim.ResetLedger()
			got, err := e.client.ListClustersByHref(e.ctx, hrefs)
			if err != nil {
				t.Fatalf("ListClustersByHref: %v", err)
			}
			if len(got) != 3 {
				t.Fatalf("got %d clusters (%v), want 3", len(got), keys(got))
			}
			for _, h := range []string{hrefs[0], hrefs[1], mgmt} {
				c, ok := got[h]
				if !ok {
					t.Fatalf("no cluster under %s; have %v", h, keys(got))
				}
				single, err := e.client.GetClusterStatus(e.ctx, h)
				if err != nil || c.Status != single || c.Status.State != cs.ClusterStateInstalling {
					t.Errorf("%s listed status %+v, single GET %+v (%v); want equal, installing", h, c.Status, single, err)
				}
			}
			l := e.sim.Ledger()
			if calls := l.ListCalls(); calls.Calls != 1 || calls.IDs != 4 {
				t.Errorf("ledger lists = %+v, want one call naming 4 distinct ids", calls)
			}
			if n := l.Count("GET", cs.ClustersPath); n != 1 {
				t.Errorf("%d list requests, want 1", n)
			}
		})
	}
}

// TestListClustersByHrefPagesBelowSize: a CS that pages below the size
// asked for is paged through, not cut short.
func TestListClustersByHrefPagesBelowSize(t *testing.T) {
	sim := simulator.New()
	defer sim.Close()
	var pages []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == cs.ClustersPath && r.Method == http.MethodGet {
			q := r.URL.Query()
			q.Set("size", "2") // this CS caps its pages at 2
			r.URL.RawQuery = q.Encode()
			pages = append(pages, q.Get("page"))
		}
		sim.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := connect(t, Config{URL: srv.URL})
	var hrefs []string
	for n := 1; n <= 5; n++ {
		if _, err := c.PostCluster(context.Background(), clusterSpec(n)); err != nil {
			t.Fatalf("PostCluster: %v", err)
		}
		hrefs = append(hrefs, cs.ClusterHref(clusterID(n)))
	}
	got, err := c.ListClustersByHref(context.Background(), hrefs)
	if err != nil || len(got) != 5 || strings.Join(pages, ",") != "1,2,3" {
		t.Fatalf("got %d clusters, %v, after pages %v; want 5 after pages 1,2,3", len(got), err, pages)
	}
}

// TestListedWithoutStatusFallsBack: items whose status is a link, or
// absent, are left out so the caller GETs them.
func TestListedWithoutStatusFallsBack(t *testing.T) {
	a, b, d := clusterID(1), clusterID(2), clusterID(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"ClusterList","page":1,"size":3,"total":3,"items":[
			{"kind":"Cluster","id":%q,"state":"ready","status":{"kind":"ClusterStatus","state":"ready"}},
			{"kind":"Cluster","id":%q,"state":"ready","status":{"kind":"ClusterStatusLink","href":"/api/aro_hcp/v1alpha1/clusters/%s/status"}},
			{"kind":"Cluster","id":%q,"state":"ready"}]}`, a, b, b, d)
	}))
	defer srv.Close()
	got, err := connect(t, Config{URL: srv.URL}).ListClustersByHref(context.Background(),
		[]string{cs.ClusterHref(a), cs.ClusterHref(b), cs.ClusterHref(d)})
	if err != nil || len(got) != 1 || got[cs.ClusterHref(a)].Status.State != cs.ClusterStateReady {
		t.Fatalf("got %v, %v; want only %s, ready", got, err, a)
	}
}

// TestBatchFaultsStayInTheCall: a failing or hanging list is one error for
// its caller, bounded by the client's timeout.
func TestBatchFaultsStayInTheCall(t *testing.T) {
	cfg := defaultConfig()
	cfg.RetryLimit, cfg.Timeout = 0, 300*time.Millisecond
	e := newEnv(t, cfg)
	hrefs := []string{cs.ClusterHref(clusterID(1)), cs.ClusterHref(clusterID(2))}
	if err := e.sim.FailNext(1, 503); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.ListClustersByHref(e.ctx, hrefs)
	wantCSError(t, err, 503)
	if got, err := e.client.ListClustersByHref(e.ctx, hrefs); err != nil || len(got) != 0 {
		t.Fatalf("the next list = %v, %v; want an empty answer", got, err)
	}
	if err := e.sim.SetFaults(simulator.Faults{HangRate: 1}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := e.client.ListClustersByHref(e.ctx, hrefs); done <- err }()
	select {
	case err := <-done:
		if cs.Classify(err) != cs.Failed {
			t.Fatalf("hung list = %v, want a failed call", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a hung list outlived the client timeout by far")
	}
}

func TestListChildrenByHref(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	for _, id := range []string{"np1", "np2", "np3"} {
		spec := nodePoolSpec()
		spec.ID = id
		if _, err := e.client.PostNodePool(e.ctx, ch, spec); err != nil {
			t.Fatalf("PostNodePool %s: %v", id, err)
		}
	}
	ea := cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://login.microsoftonline.com/t/v2.0", Audiences: []string{"aud"}}
	if _, err := e.client.PostExternalAuth(e.ctx, ch, ea); err != nil {
		t.Fatalf("PostExternalAuth: %v", err)
	}
	e.sim.ResetLedger()

	np := func(id string) string { return cs.NodePoolHref(ch, id) }
	pools, err := e.client.ListNodePoolsByHref(e.ctx, ch, []string{np("np1"), np("np3"), np("gone")})
	if err != nil || len(pools) != 2 || pools[np("np1")].Status.State != cs.NodePoolStateValidating ||
		pools[np("np3")].Href != np("np3") {
		t.Fatalf("node pools = %+v, %v; want np1 and np3, validating", pools, err)
	}
	auths, err := e.client.ListExternalAuthsByHref(e.ctx, ch, []string{cs.ExternalAuthHref(ch, "entra"), cs.ExternalAuthHref(ch, "other")})
	if err != nil || len(auths) != 1 || auths[cs.ExternalAuthHref(ch, "entra")].Status.State != cs.ExternalAuthStateReady {
		t.Fatalf("external auths = %+v, %v; want entra, ready", auths, err)
	}
	l := e.sim.Ledger()
	if calls := l.ListCalls(); calls.Calls != 2 || calls.IDs != 3 {
		t.Errorf("ledger lists = %+v, want 2 calls, the node pool one naming 3 ids", calls)
	}
	if l.Total() != 2 {
		t.Errorf("%d requests, want 2", l.Total())
	}

	other := cs.ClusterHref(clusterID(2))
	_, err = e.client.ListNodePoolsByHref(e.ctx, ch, []string{cs.NodePoolHref(other, "np1")})
	if err == nil || !strings.Contains(err.Error(), clusterID(2)) {
		t.Errorf("a node pool of another cluster: err = %v, want one naming that cluster", err)
	}
	if _, err := e.client.ListExternalAuthsByHref(e.ctx, other, []string{cs.ExternalAuthHref(other, "entra")}); cs.Classify(err) != cs.Absent {
		t.Errorf("external auths of a missing cluster: err = %v, want a 404", err)
	}
	if got, err := e.client.ListClustersByHref(e.ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("no hrefs = %v, %v; want nothing and no request", got, err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sorted(out)
}
