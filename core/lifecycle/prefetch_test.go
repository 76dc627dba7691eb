package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/simulator"
)

func TestPlanLists(t *testing.T) {
	c := cs.ClusterHref
	np := func(cl, id string) string { return cs.NodePoolHref(c(cl), id) }
	ea := func(cl, id string) string { return cs.ExternalAuthHref(c(cl), id) }
	bg := cs.ClustersMgmtPrefix + "/clusters/a/break_glass_credentials/x"
	hrefs := []string{c("a"), np("a", "p1"), c("b"), ea("a", "e"), np("b", "p1"), c("c"), np("a", "p2"), c("a"), bg, "", np("a", "p3")}
	got := planLists(hrefs, 2)
	want := []listCall{
		{kind: cs.HrefCluster, hrefs: []string{c("a"), c("b")}},
		{kind: cs.HrefCluster, hrefs: []string{c("c")}},
		{kind: cs.HrefNodePool, cluster: c("a"), hrefs: []string{np("a", "p1"), np("a", "p2")}},
		{kind: cs.HrefNodePool, cluster: c("a"), hrefs: []string{np("a", "p3")}},
		{kind: cs.HrefExternalAuth, cluster: c("a"), hrefs: []string{ea("a", "e")}},
		{kind: cs.HrefNodePool, cluster: c("b"), hrefs: []string{np("b", "p1")}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("planLists =\n%+v\nwant\n%+v", got, want)
	}
	if got := planLists(hrefs[:3], 1); len(got) != 3 {
		t.Errorf("batch 1: %d calls, want one per object", len(got))
	}
}

// prefetchWorld is a simulator with clusters c1..c3 (ready), node pools
// np1, np2 and external auth entra under c1, reached in memory by the
// production client.
type prefetchWorld struct {
	sim    *simulator.Simulator
	client *ocm.Client
	clk    *fakeClock
	rec    *cs.Recorder // counts the client's requests made under "tick"
	c      []string     // cluster hrefs
}

func newPrefetchWorld(t *testing.T) *prefetchWorld {
	t.Helper()
	w := &prefetchWorld{clk: newFakeClock()}
	w.rec = cs.NewRecorder(w.clk, func(context.Context) string { return "tick" })
	f := csfake.New(t, csfake.Config{Timeout: 5 * time.Second, Recorder: w.rec}, simulator.WithClock(w.clk), simulator.WithDurations(testDurations()))
	w.sim, w.client = f.Sim, f.Client
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		c, err := w.client.PostCluster(ctx, cs.ClusterSpec{ID: fmt.Sprintf("%032d", i), Name: fmt.Sprintf("c%d", i),
			Azure: cs.AzureRef{SubscriptionID: "s", ResourceGroupName: "rg", ResourceName: fmt.Sprintf("c%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		w.c = append(w.c, c.Href)
	}
	w.clk.Advance(3 * time.Minute)
	for _, id := range []string{"np1", "np2"} {
		if _, err := w.client.PostNodePool(ctx, w.c[0], cs.NodePoolSpec{ID: id, Replicas: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.client.PostExternalAuth(ctx, w.c[0], cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://issuer"}); err != nil {
		t.Fatal(err)
	}
	w.sim.ResetLedger()
	return w
}

// TestPrefetchAnswersThePolls: after one list per kind and cluster, the
// polls' reads cost no request; objects the lists did not return are
// read with their GET and answer as before (404 here).
func TestPrefetchAnswersThePolls(t *testing.T) {
	w := newPrefetchWorld(t)
	ctx := context.Background()
	np1, np2 := cs.NodePoolHref(w.c[0], "np1"), cs.NodePoolHref(w.c[0], "np2")
	npGone := cs.NodePoolHref(w.c[0], "gone")
	ea := cs.ExternalAuthHref(w.c[0], "entra")
	missing := cs.ClusterHref(fmt.Sprintf("%032d", 99))
	s := prefetch(ctx, w.client, slog.New(slog.DiscardHandler), []string{w.c[0], w.c[1], w.c[2], missing, np1, np2, npGone, ea}, 100, 4)
	if l := w.sim.Ledger(); l.Total() != 3 || l.ListCalls().Calls != 3 {
		t.Fatalf("prefetch made %d requests (%+v), want 3 lists: clusters, node pools, external auths", l.Total(), l.ListCalls())
	}
	c := csReads{cs: w.client, page: s}
	for _, h := range w.c {
		st, err := c.clusterStatus(ctx, h)
		if err != nil || st.State != cs.ClusterStateReady {
			t.Errorf("status of %s = %+v, %v; want ready", h, st, err)
		}
	}
	if cl, err := c.cluster(ctx, w.c[1]); err != nil || cl.Href != w.c[1] || cl.Status.State != cs.ClusterStateReady {
		t.Errorf("cluster %s = %+v, %v", w.c[1], cl, err)
	}
	if st, err := c.nodePoolStatus(ctx, np2); err != nil || st.State != cs.NodePoolStateValidating {
		t.Errorf("node pool status = %+v, %v; want validating", st, err)
	}
	if np, err := c.nodePool(ctx, np1); err != nil || np.Replicas != 1 {
		t.Errorf("node pool = %+v, %v", np, err)
	}
	if a, err := c.externalAuth(ctx, ea); err != nil || a.Status.State != cs.ExternalAuthStateReady {
		t.Errorf("external auth = %+v, %v", a, err)
	}
	if l := w.sim.Ledger(); l.Total() != 3 {
		t.Errorf("the polls made %d requests after the lists, want none", l.Total()-3)
	}
	if _, err := c.clusterStatus(ctx, missing); cs.Classify(err) != cs.Absent {
		t.Errorf("a cluster no list returned: err = %v, want the GET's 404", err)
	}
	if _, err := c.nodePoolStatus(ctx, npGone); cs.Classify(err) != cs.Absent {
		t.Errorf("a node pool no list returned: err = %v, want the GET's 404", err)
	}
	if l := w.sim.Ledger(); l.Count("GET", cs.ClustersPath+"/{id}/status") != 1 ||
		l.Count("GET", cs.ClustersPath+"/{id}/node_pools/{np}/status") != 1 {
		t.Errorf("fallback GETs = %v, want one of each", l.ByPattern)
	}
	// A job no page prepared reads everything with a GET.
	w.sim.ResetLedger()
	if _, err := (csReads{cs: w.client}).clusterStatus(ctx, w.c[0]); err != nil || w.sim.Ledger().Total() != 1 {
		t.Errorf("no snapshot: %v, %d requests; want one GET", err, w.sim.Ledger().Total())
	}
}

// TestPrefetchFailureStaysInItsBatch: a list that fails leaves its own
// objects to their GETs (so one sick object costs the healthy ones of its
// batch nothing but the list's time) and costs the other batches nothing;
// a list answered 404 (the parent cluster gone) leaves its objects to
// their GETs too, which answer 404 as before.
func TestPrefetchFailureStaysInItsBatch(t *testing.T) {
	w := newPrefetchWorld(t)
	ctx := context.Background()
	if err := w.sim.FailNext(1, 503); err != nil {
		t.Fatal(err)
	}
	gone := cs.ClusterHref(fmt.Sprintf("%032d", 98))
	npOfGone := cs.NodePoolHref(gone, "np1")
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	// Batch 2: the first list (c1, c2) fails, the second (c3) does not.
	s := prefetch(ctx, w.client, log, []string{w.c[0], w.c[1], w.c[2], npOfGone}, 2, 1)
	if len(s.clusters) != 1 {
		t.Fatalf("snapshot holds %d clusters, want only c3's", len(s.clusters))
	}
	if got := logs.String(); strings.Count(got, "batched clusters service read failed") != 1 ||
		!strings.Contains(got, "objects=2") || !strings.Contains(got, "503") {
		t.Errorf("want one warning naming the failed list's 2 objects and its 503, got:\n%s", got)
	}
	c := csReads{cs: w.client, page: s}
	w.sim.ResetLedger()
	if st, err := c.clusterStatus(ctx, w.c[2]); err != nil || st.State != cs.ClusterStateReady || w.sim.Ledger().Total() != 0 {
		t.Errorf("%s in the good list = %+v, %v after %d requests; want ready from the list", w.c[2], st, err, w.sim.Ledger().Total())
	}
	for _, h := range w.c[:2] {
		if st, err := c.clusterStatus(ctx, h); err != nil || st.State != cs.ClusterStateReady {
			t.Errorf("%s in the failed list = %+v, %v; want its own GET to answer ready", h, st, err)
		}
	}
	if n := w.sim.Ledger().Count("GET", cs.ClustersPath+"/{id}/status"); n != 2 {
		t.Errorf("%d status GETs, want one for each object of the failed list", n)
	}
	if _, err := c.nodePoolStatus(ctx, npOfGone); cs.Classify(err) != cs.Absent {
		t.Errorf("node pool of a gone cluster: err = %v, want its GET's 404", err)
	}
}

// TestRecordKeepsEveryAnswer: a page's list answers of one kind all land
// in its snapshot, the first kept as it came, a failed one adding
// nothing.
func TestRecordKeepsEveryAnswer(t *testing.T) {
	var mu sync.Mutex
	into := map[string]int{}
	first := map[string]int{"a": 1}
	if err := record(&mu, &into)(first, nil); err != nil {
		t.Fatal(err)
	}
	if err := record(&mu, &into)(map[string]int{"b": 2}, nil); err != nil {
		t.Fatal(err)
	}
	if err := record(&mu, &into)(map[string]int{"c": 3}, errors.New("list failed")); err == nil {
		t.Fatal("a failed list's error was lost")
	}
	if err := record(&mu, &into)(nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"a": 1, "b": 2}; !maps.Equal(into, want) {
		t.Errorf("snapshot holds %v, want %v", into, want)
	}
	var empty map[string]int
	if err := record(&mu, &empty)(nil, nil); err != nil || empty != nil {
		t.Errorf("an empty answer made %v, %v", empty, err)
	}
}

// TestPrefetchOneCall: a page whose clusters make one list call (made
// without the pool) records its answers; once the tick's context has
// ended it starts none, as the pool would not have run it, so the
// transport counts no failed request in the tick's figures.
func TestPrefetchOneCall(t *testing.T) {
	for _, tc := range []struct {
		name     string
		canceled bool
		requests int
	}{
		{"live", false, 1},
		{"canceled", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPrefetchWorld(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.canceled {
				cancel()
			}
			counted := w.rec.Count(ctx)
			s := prefetch(ctx, w.client, slog.New(slog.DiscardHandler), w.c, 100, 4)
			if got := w.sim.Ledger().Total(); got != tc.requests {
				t.Fatalf("prefetch made %d requests, want %d", got, tc.requests)
			}
			if sum := counted(); sum.Count != tc.requests || sum.Errors != 0 {
				t.Errorf("the transport counted %d requests, %d failed; want %d, none failed", sum.Count, sum.Errors, tc.requests)
			}
			if len(s.clusters) != 3*tc.requests {
				t.Errorf("snapshot holds %d clusters, want %d", len(s.clusters), 3*tc.requests)
			}
		})
	}
}
