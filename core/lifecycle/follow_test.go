package lifecycle

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// A node pool and an external auth submitted with their cluster are
// deferred by the change feed (the cluster has no CS ID yet); the
// cluster's dispatch hands them on in the same invocation, with no time
// passing, instead of leaving them to the tick's dispatch grace.
func TestChildrenFollowTheirClusterInTheSameInvocation(t *testing.T) {
	e := newEnv(t)
	cl := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	np := e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{})
	ea := e.create(t, document.KindExternalAuth, externalAuthRID("c1", "ea1"), request{})
	docs := e.feed(t)
	ctx := context.Background()
	res, err := e.engine.DispatchDocuments(ctx, []json.RawMessage{opDoc(t, docs, np), opDoc(t, docs, ea)})
	if err != nil || res.Deferred != 2 {
		t.Fatalf("children before their cluster = %+v, %v; want both deferred", res, err)
	}
	if _, err := e.engine.DispatchDocuments(ctx, []json.RawMessage{opDoc(t, docs, cl)}); err != nil {
		t.Fatal(err)
	}
	if got := e.csPosts(nodePoolsPOST); got != 1 {
		t.Errorf("node pool POSTs after the cluster's dispatch = %d, want 1", got)
	}
	if got := e.csPosts(externalAuthsPOST); got != 1 {
		t.Errorf("external auth POSTs after the cluster's dispatch = %d, want 1", got)
	}
	for _, rid := range []string{nodePoolRID("c1", "np1"), externalAuthRID("c1", "ea1")} {
		if e.resource(t, rid).ClusterServiceID() == "" {
			t.Errorf("%s has no clusters service ID", rid)
		}
	}
	// A redelivery changes nothing: no second POST.
	if _, err := e.engine.DispatchDocuments(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if np, ea := e.csPosts(nodePoolsPOST), e.csPosts(externalAuthsPOST); np != 1 || ea != 1 {
		t.Errorf("after redelivery: %d node pool and %d external auth POSTs, want 1 each", np, ea)
	}
}

// A child whose change-feed delivery came and went before its cluster was
// in CS (dispatched elsewhere, say) is picked up by the next tick, well
// inside the dispatch grace.
func TestTickDispatchesAChildOnceItsClusterIsInCS(t *testing.T) {
	e := newEnv(t)
	e.create(t, document.KindCluster, clusterRID("c1"), request{})
	if res, err := e.deliver(t); err != nil || res.Dispatched != 1 {
		t.Fatalf("cluster dispatch = %+v, %v", res, err)
	}
	np := e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{})
	e.feed(t) // the feed moved on without dispatching it
	e.clk.Advance(time.Second)
	if e.cfg.DispatchGrace != 0 && e.cfg.DispatchGrace <= time.Second {
		t.Fatalf("test assumes a grace over a second, have %s", e.cfg.DispatchGrace)
	}
	res := e.tick(t)
	if res.Dispatched != 1 || e.csPosts(nodePoolsPOST) != 1 {
		t.Fatalf("tick = %+v, node pool POSTs %d; want the node pool dispatched", res, e.csPosts(nodePoolsPOST))
	}
	if e.resource(t, nodePoolRID("c1", "np1")).ClusterServiceID() == "" {
		t.Errorf("node pool %s has no clusters service ID", np)
	}
}

// A child of a cluster that is not in CS still waits: the tick does not
// dispatch it early only to defer it again.
func TestTickLeavesAChildOfAClusterNotInCS(t *testing.T) {
	e := newEnv(t)
	e.create(t, document.KindCluster, clusterRID("c1"), request{})
	e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{})
	e.feed(t) // nothing dispatched
	e.clk.Advance(time.Second)
	if res := e.tick(t); res.Dispatched != 0 {
		t.Errorf("tick = %+v, want nothing dispatched inside the grace", res)
	}
	if got := e.csPosts(nodePoolsPOST); got != 0 {
		t.Errorf("node pool POSTs = %d, want 0", got)
	}
}
