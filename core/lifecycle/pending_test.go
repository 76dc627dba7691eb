package lifecycle

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestPendingIDAge: the age of a cluster's pending ID comes from the time
// recorded beside it (or the operation's startTime when an upstream writer
// dropped that), never from the document's _ts, and PendingIDGrace alone
// sets the window.
func TestPendingIDAge(t *testing.T) {
	cases := []struct {
		name string
		// before runs after the failed first dispatch, on the cluster
		// document, at the time the redelivery happens.
		before       func(t *testing.T, e *env)
		wantDeferred bool
	}{
		{"fresh pending ID", func(*testing.T, *env) {}, true},
		{"older than the grace", func(_ *testing.T, e *env) { e.clk.Advance(2 * time.Minute) }, false},
		{"unrelated write after the grace", func(t *testing.T, e *env) {
			e.clk.Advance(2 * time.Minute)
			e.editDoc(t, clusterRID("c1"), func(doc obj) { props(doc)["tags"] = obj{"touched": "now"} })
		}, false},
		{"time dropped, operation recent", func(t *testing.T, e *env) {
			e.editDoc(t, clusterRID("c1"), func(doc obj) { delete(spp(doc), "pendingClusterServiceIDTime") })
		}, true},
		{"time dropped, operation old", func(t *testing.T, e *env) {
			e.clk.Advance(2 * time.Minute)
			e.editDoc(t, clusterRID("c1"), func(doc obj) { delete(spp(doc), "pendingClusterServiceIDTime") })
		}, false},
		{"pending ID chosen late in a long operation", func(t *testing.T, e *env) {
			e.clk.Advance(10 * time.Minute)
			e.editDoc(t, clusterRID("c1"), func(doc obj) {
				spp(doc)["pendingClusterServiceIDTime"] = e.clk.Now().Add(-10 * time.Second).Format(time.RFC3339)
			})
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.PendingIDGrace = time.Minute; c.DispatchGrace = time.Hour })
			name := e.create(t, document.KindCluster, clusterRID("c1"), request{})
			if err := e.sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: http.StatusInternalServerError}); err != nil {
				t.Fatal(err)
			}
			docs := e.feed(t)
			if _, err := e.engine.DispatchDocuments(context.Background(), docs); err == nil {
				t.Fatal("dispatch during the outage succeeded")
			}
			res := e.resource(t, clusterRID("c1"))
			if at, ok := res.PendingClusterServiceIDTime(); res.PendingClusterServiceID() == "" || !ok || !at.Equal(e.clk.Now()) {
				t.Fatalf("pending ID %q chosen at %v (%v); want one chosen now", res.PendingClusterServiceID(), at, ok)
			}
			if err := e.sim.SetFaults(simulator.Faults{}); err != nil {
				t.Fatal(err)
			}
			tc.before(t, e)
			r, err := e.engine.DispatchDocuments(context.Background(), docs)
			if err != nil {
				t.Fatalf("redelivery: %v", err)
			}
			if got := r.Deferred == 1; got != tc.wantDeferred || r.Dispatched == 1 == tc.wantDeferred {
				t.Fatalf("redelivery = %+v; want deferred %v", r, tc.wantDeferred)
			}
			if !tc.wantDeferred {
				res := e.resource(t, clusterRID("c1"))
				if _, ok := res.PendingClusterServiceIDTime(); ok || res.PendingClusterServiceID() != "" || res.ClusterServiceID() == "" {
					t.Errorf("after dispatch: pending %q, clusterServiceID %q; want only the latter", res.PendingClusterServiceID(), res.ClusterServiceID())
				}
				e.wantOp(t, name, arm.ProvisioningStateAccepted, "")
			}
		})
	}
}
