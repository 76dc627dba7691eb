package lifecycle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfaults"
)

// TestAnswerAboutAnotherClusterIsNoEvidence is issue #43's case 4: a
// response cache keyed without the id serves cluster A's genuine ready
// status for cluster B on the single-object GET path (batching off). The
// answer is about A, so it is no evidence about B: B's create stays in
// progress while CS installs it, and ends Succeeded on CS's own word
// about B once the cache is gone.
func TestAnswerAboutAnotherClusterIsNoEvidence(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CSBatchSize = 1 })
	hrefA := e.readyCluster(t, "a")
	cache := csfaults.NewIDlessCache(e.sim)
	e.fake.Front(cache.Answer)
	ctx := context.Background()
	if _, err := e.cs.GetClusterStatus(ctx, hrefA); err != nil { // the cache now holds A's ready
		t.Fatal(err)
	}
	if _, err := e.cs.GetCluster(ctx, hrefA); err != nil {
		t.Fatal(err)
	}

	op := e.create(t, document.KindCluster, clusterRID("b"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	hrefB := e.resource(t, clusterRID("b")).ClusterServiceID()
	for range 2 {
		e.clk.Advance(30 * time.Second)
		e.tick(t)
	}
	if cache.Misanswered() == 0 {
		t.Fatal("the cache never answered B's read with A's answer")
	}
	if got := e.op(t, op).Properties.Status; got.IsTerminal() {
		t.Fatalf("B's create is %s on an answer about A (%s); CS is still installing %s", got, hrefA, hrefB)
	}
	lines := e.logLines("clusters service call failed; operation backed off", op)
	if len(lines) == 0 || !strings.Contains(lines[0], "class=unrecognized") || !strings.Contains(lines[0], hrefA) {
		t.Fatalf("want the answer about another object logged as unrecognized, naming what came back; got %q", lines)
	}

	e.fake.Front(nil)
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

// TestAnswerAboutAnotherNodePoolIsNoEvidence: the same, for node pool
// np1 of cluster B behind a cache that serves np1 of cluster A (the same
// name), with batching on: the batched list the cache serves is A's, its
// item about another object, and the GET that follows is answered with
// A's status too. Neither completes B's create.
func TestAnswerAboutAnotherNodePoolIsNoEvidence(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "a")
	e.readyCluster(t, "b")
	npA := e.create(t, document.KindNodePool, nodePoolRID("a", "np1"), request{})
	e.drive(t, npA)
	e.wantOp(t, npA, arm.ProvisioningStateSucceeded, "")
	hrefA := e.resource(t, nodePoolRID("a", "np1")).ClusterServiceID()

	cache := csfaults.NewIDlessCache(e.sim)
	e.fake.Front(cache.Answer)
	ctx := context.Background()
	if _, err := e.cs.GetNodePoolStatus(ctx, hrefA); err != nil {
		t.Fatal(err)
	}
	clusterA, _, _ := strings.Cut(hrefA, "/node_pools/")
	if _, err := e.cs.ListNodePoolsByHref(ctx, clusterA, []string{hrefA}); err != nil {
		t.Fatal(err)
	}

	op := e.create(t, document.KindNodePool, nodePoolRID("b", "np1"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		e.clk.Advance(30 * time.Second)
		e.tick(t)
	}
	if cache.Misanswered() == 0 {
		t.Fatal("the cache never answered B's reads with A's answers")
	}
	if got := e.op(t, op).Properties.Status; got.IsTerminal() {
		t.Fatalf("B's node pool create is %s on answers about A's (%s)", got, hrefA)
	}
	e.fake.Front(nil)
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

// TestClusterOfAnotherResourceIsNoEvidence: an answer with the id and
// href asked for but about another ARM resource (a proxy that sends B's
// reads to A and relabels A's answers as B's) is no evidence about B,
// batched or not: B's create stays in progress on A's ready.
func TestClusterOfAnotherResourceIsNoEvidence(t *testing.T) {
	for _, batch := range []int{0, 1} {
		t.Run(map[int]string{0: "batched", 1: "single GETs"}[batch], func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.CSBatchSize = batch })
			hrefA := e.readyCluster(t, "a")
			idA := hrefA[strings.LastIndex(hrefA, "/")+1:]
			var idB atomic.Value
			idB.Store("")
			e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
				b := idB.Load().(string)
				if b == "" || r.Method != http.MethodGet || !about(r, b) {
					return false
				}
				r2 := r.Clone(r.Context())
				r2.URL.Path = strings.ReplaceAll(r.URL.Path, b, idA)
				r2.URL.RawQuery = strings.ReplaceAll(r.URL.RawQuery, b, idA)
				rec := httptest.NewRecorder()
				e.sim.ServeHTTP(rec, r2)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write([]byte(strings.ReplaceAll(rec.Body.String(), idA, b)))
				return true
			})
			op := e.create(t, document.KindCluster, clusterRID("b"), request{})
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			hrefB := e.resource(t, clusterRID("b")).ClusterServiceID()
			idB.Store(hrefB[strings.LastIndex(hrefB, "/")+1:])
			for range 2 {
				e.clk.Advance(30 * time.Second)
				e.tick(t)
			}
			if got := e.op(t, op).Properties.Status; got.IsTerminal() {
				t.Fatalf("B's create is %s on an answer about resource a", got)
			}
			lines := e.logLines("clusters service call failed; operation backed off", op)
			if len(lines) == 0 || !strings.Contains(lines[0], "another Azure resource") {
				t.Fatalf("want the answer about another resource logged; got %q", lines)
			}
			idB.Store("")
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		})
	}
}

// TestEmptySuccessIsUnrecognized: a 200 {} or HTML answer to a cluster's
// single-object GETs was logged as `unhandled cluster state ""`; it is an
// unrecognized answer, logged as one and counted, and the create goes on
// to CS's own word.
func TestEmptySuccessIsUnrecognized(t *testing.T) {
	for _, a := range []answer{{200, "application/json", "{}"}, {200, "text/html", "<html><body>OK</body></html>"}, {200, "application/json", ""}} {
		t.Run(a.ctype+" "+a.body, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.CSBatchSize = 1 })
			op := e.create(t, document.KindCluster, clusterRID("b"), request{})
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			href := e.resource(t, clusterRID("b")).ClusterServiceID()
			id := href[strings.LastIndex(href, "/")+1:]
			e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || !about(r, id) {
					return false
				}
				a.write(w)
				return true
			})
			e.clk.Advance(30 * time.Second)
			e.tick(t)
			if strings.Contains(e.logs.String(), "unhandled cluster state") {
				t.Fatal("the answer was read as a cluster state")
			}
			lines := e.logLines("clusters service call failed; operation backed off", op)
			if len(lines) != 1 || !strings.Contains(lines[0], "class=unrecognized") {
				t.Fatalf("want one line logging the answer as unrecognized; got %q", lines)
			}
			e.fake.Front(nil)
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		})
	}
}

func TestClusterIDSegments(t *testing.T) {
	segs, ok := clusterIDSegments(clusterRID("c1"))
	if !ok || segs[2] != testSub || !strings.EqualFold(segs[3], "resourceGroups") || segs[8] != "c1" {
		t.Fatalf("segments of %s = %q, %v", clusterRID("c1"), segs, ok)
	}
	for _, bad := range []string{"", "/subscriptions/s", nodePoolRID("c1", "np1")} {
		if _, ok := clusterIDSegments(bad); ok {
			t.Errorf("%q read as a cluster ID", bad)
		}
	}
	id := clusterRID("c1")
	if n := testing.AllocsPerRun(100, func() { _, _ = clusterIDSegments(id) }); n != 0 {
		t.Errorf("%v allocations a split, want none", n)
	}
}
