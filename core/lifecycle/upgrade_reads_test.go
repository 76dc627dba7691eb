package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestUpgradePolicyReadsEveryOtherTick: an upgrade under way reads CS's
// policy list on every other tick — half the ticks' reads, measured over
// an hour of 10 s ticks against the simulator's request ledger — and a
// failure CS reports is written within two ticks, whichever tick it
// comes after. Before: a 10 s doubling to 5 min backoff, 13 reads an
// hour, and a failure seen up to five minutes late.
func TestUpgradePolicyReadsEveryOtherTick(t *testing.T) {
	const ticks = 360 // an hour of the 10 s timer
	for _, tc := range upgradeCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := upgradeEnv(t, 2*time.Hour)
			op := e.update(t, tc.rid, request{}, tc.change)
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.sim.ResetLedger()
			for range ticks {
				e.tick(t)
				e.clk.Advance(10 * time.Second)
			}
			if got := e.op(t, op).Properties.Status; got != arm.ProvisioningStateUpdating {
				t.Fatalf("after an hour of a 2-hour upgrade the update is %s, want Updating", got)
			}
			l := e.sim.Ledger()
			reads, total := l.Count("GET", tc.posts), l.Total()
			t.Logf("%d ticks: %d policy list reads, %d CS requests (%.2f a tick)", ticks, reads, total, float64(total)/ticks)
			if reads < ticks/2-1 || reads > ticks/2+1 {
				t.Errorf("%d policy list reads in %d ticks, want one every other tick", reads, ticks)
			}
		})
	}
	for _, tc := range upgradeCases() {
		for after := range 3 { // CS fails it after 0, 1 or 2 ticks of the run
			t.Run(tc.name+" failure", func(t *testing.T) {
				e, _, _ := upgradeEnv(t, 2*time.Hour)
				op := e.update(t, tc.rid, request{}, tc.change)
				if _, err := e.deliver(t); err != nil {
					t.Fatal(err)
				}
				for range 5 + after {
					e.tick(t)
					e.clk.Advance(10 * time.Second)
				}
				id := ""
				if tc.name == "node pool" {
					id = "np1"
				}
				if failed, err := e.sim.FailUpgrade("c1", id, simulator.UpgradeFailure{Message: "etcd quorum lost during upgrade"}); err != nil || !failed {
					t.Fatalf("FailUpgrade: %v, %v", failed, err)
				}
				seen := 0
				for seen = 1; seen <= 5; seen++ {
					e.tick(t)
					if e.op(t, op).Properties.Status == arm.ProvisioningStateFailed {
						break
					}
					e.clk.Advance(10 * time.Second)
				}
				if seen > 2 {
					t.Errorf("CS's failure written on tick %d after it, want within two", seen)
				}
				// CS's failure, not the caller's: a server-side code.
				e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
			})
		}
	}
}
