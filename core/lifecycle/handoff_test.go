package lifecycle

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/hang"
)

// TestBatchVerdict: a change-feed batch answers 500 (the host retries it)
// only for a failure of CS or the store as a whole, or when nothing shows
// CS works; a sick object among healthy ones costs only itself.
func TestBatchVerdict(t *testing.T) {
	tests := []struct {
		name string
		// run creates operations and breaks what it needs broken; it
		// returns the operations that must be named if the batch fails.
		run     func(t *testing.T, e *env, p *hang.Set) []string
		wantErr bool
	}{
		{"one hung among healthy", func(t *testing.T, e *env, p *hang.Set) []string {
			p.Hang("'sick-0'")
			sick := e.create(t, document.KindCluster, clusterRID("sick-0"), request{})
			e.create(t, document.KindCluster, clusterRID("ok-0"), request{})
			return []string{sick}
		}, false},
		{"only a hung one, CS never seen working", func(t *testing.T, e *env, p *hang.Set) []string {
			p.Hang("'sick-0'")
			return []string{e.create(t, document.KindCluster, clusterRID("sick-0"), request{})}
		}, true},
		{"only a hung one, CS answered a moment ago", func(t *testing.T, e *env, p *hang.Set) []string {
			e.create(t, document.KindCluster, clusterRID("ok-0"), request{})
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(csEvidenceWindow / 2)
			p.Hang("'sick-0'")
			return []string{e.create(t, document.KindCluster, clusterRID("sick-0"), request{})}
		}, false},
		{"only a hung one, CS last answered long ago", func(t *testing.T, e *env, p *hang.Set) []string {
			e.create(t, document.KindCluster, clusterRID("ok-0"), request{})
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * csEvidenceWindow)
			p.Hang("'sick-0'")
			return []string{e.create(t, document.KindCluster, clusterRID("sick-0"), request{})}
		}, true},
		{"CS throttles one call among healthy", func(t *testing.T, e *env, p *hang.Set) []string {
			var ops []string
			for i := range 3 {
				ops = append(ops, e.create(t, document.KindCluster, clusterRID(fmt.Sprintf("ok-%d", i)), request{}))
			}
			if err := e.sim.FailNext(1, http.StatusServiceUnavailable); err != nil {
				t.Fatal(err)
			}
			return ops[:0] // whichever met the 503
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				e := newEnv(t, func(c *Config) { c.PollConcurrency = 2 })
				p := e.throughProxy(t, hungCallTimeout)
				named := tc.run(t, e, p)
				res, err := e.deliver(t)
				if (err != nil) != tc.wantErr {
					t.Fatalf("batch = %+v, error %v; want an error: %v", res, err, tc.wantErr)
				}
				var de *DispatchError
				if err != nil && !errors.As(err, &de) {
					t.Fatalf("error %v is not a DispatchError", err)
				}
				for _, name := range named {
					if err != nil && !strings.Contains(err.Error(), name) {
						t.Errorf("error %v does not name %s", err, name)
					}
					if err == nil && len(e.logLines("dispatch failed; the operation is left to the tick", name)) != 1 {
						t.Errorf("no single hand-off line for %s", name)
					}
				}
			})
		})
	}
}

// TestHandedOffDispatchFollowsItsBackoff: an operation a batch handed over
// gets no CS call before its backoff is due, then is dispatched by the
// tick without waiting for DispatchGrace (an hour here); a dispatch that
// is deferred then (its pending cluster ID is still young) stays due for
// the next tick instead of falling back to the grace.
func TestHandedOffDispatchFollowsItsBackoff(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, func(c *Config) {
			c.PollConcurrency = 2
			c.DispatchGrace = time.Hour
			c.PendingIDGrace = 30 * time.Second
			c.PollBackoffBase, c.PollBackoffMax = 10*time.Second, time.Minute
		})
		p := e.throughProxy(t, hungCallTimeout)
		p.Hang("'sick-0'")
		sick := e.create(t, document.KindCluster, clusterRID("sick-0"), request{})
		e.create(t, document.KindCluster, clusterRID("ok-0"), request{})
		if res, err := e.deliver(t); err != nil || res.HandedOff != 1 {
			t.Fatalf("batch = %+v, %v; want the sick one handed off", res, err)
		}
		p.Heal()
		asked := func() int { return e.csPosts(clustersPOST) - 1 } // ok-0 made one

		if res := e.tickWithin(t, time.Minute); res.BackedOff != 1 || asked() != 0 {
			t.Fatalf("tick before the backoff = %+v, %d POSTs; want it backed off, no CS call", res, asked())
		}
		e.clk.Advance(11 * time.Second) // backoff due; the pending ID is 11s old
		e.tickWithin(t, time.Minute)
		if asked() != 0 {
			t.Fatalf("%d POSTs while the pending ID was young", asked())
		}
		if _, ok := e.engine.pollAt.lookup(docRef(e.op(t, sick))); !ok {
			t.Fatal("a deferred hand-off lost its schedule, so it would wait for the hour of grace")
		}
		e.clk.Advance(20 * time.Second) // pending ID 31s old
		if res := e.tickWithin(t, time.Minute); res.Dispatched != 1 || asked() != 1 {
			t.Fatalf("tick after the backoff = %+v, %d POSTs; want it dispatched once", res, asked())
		}
		if e.resource(t, clusterRID("sick-0")).ClusterServiceID() == "" {
			t.Fatal("no CS ID recorded")
		}
		if _, ok := e.engine.pollAt.lookup(docRef(e.op(t, sick))); ok {
			t.Fatal("a dispatched operation is still backed off")
		}
	})
}
