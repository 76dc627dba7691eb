package lifecycle

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/csfake"
)

// gatewayLists answers the lists the upgrade code reads (versions, upgrade
// policies) with a gateway's 200 {} while on is set; it counts them.
func (e *env) gatewayLists(t *testing.T) (on *atomic.Bool, answered *atomic.Int64) {
	t.Helper()
	on, answered = &atomic.Bool{}, &atomic.Int64{}
	e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
		list := strings.HasSuffix(r.URL.Path, "/versions") || strings.HasSuffix(r.URL.Path, "upgrade_policies")
		if !on.Load() || r.Method != http.MethodGet || !list {
			return false
		}
		answered.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "{}")
		return true
	})
	e.cs = e.fake.NewClient(csfake.Config{RetryLimit: 0, Timeout: 10 * time.Second, Recorder: e.calls})
	e.engine = e.newEngine(t)
	return on, answered
}

// TestGatewayListIsNoEvidence: a gateway's 200 {} to the version or
// upgrade-policy list is no list. Before, it read as an empty one: the
// version list offered nothing, so the update Failed at dispatch ("the
// versions possible are none") although CS offers the version; and an
// empty policy list would have posted a second policy. Now the dispatch
// is retried, logged once as an answer that is not CS's, and once the
// gateway is gone the upgrade runs with one policy.
func TestGatewayListIsNoEvidence(t *testing.T) {
	for _, tc := range upgradeCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := upgradeEnv(t, time.Minute)
			on, answered := e.gatewayLists(t)
			on.Store(true)
			op := e.update(t, tc.rid, request{}, tc.change)
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				e.tick(t)
				e.clk.Advance(time.Minute)
			}
			if got := e.op(t, op); got.Properties.Status.IsTerminal() {
				t.Fatalf("the update is %s on a gateway's {} list: %+v", got.Properties.Status, got.Properties.Error)
			}
			if answered.Load() == 0 {
				t.Fatal("the gateway answered nothing")
			}
			if n := strings.Count(e.logs.String(), "not Clusters Service's own"); n == 0 {
				t.Error("the gateway's answer was not logged")
			}
			on.Store(false)
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
			if n := e.sim.Ledger().Count("POST", tc.posts); n != 1 {
				t.Errorf("%d upgrade policies posted, want 1", n)
			}
		})
	}
}
