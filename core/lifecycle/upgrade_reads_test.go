package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// TestUpgradePolicyReadsBackOff: an upgrade under way reads CS's policy
// list on the op's backoff (10 s doubling to 5 min), not every tick: the
// version CS reports, read every tick anyway, is what makes it Succeeded;
// the policy only tells a failure, which can wait minutes in an upgrade
// of hours. Measured over an hour of 10 s ticks against the simulator's
// request ledger. Before: one list per tick, 360.
func TestUpgradePolicyReadsBackOff(t *testing.T) {
	const ticks = 360 // an hour of the 10 s timer
	for _, tc := range upgradeCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := upgradeEnv(t, 2*time.Hour)
			op := e.update(t, tc.rid, request{}, tc.change)
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			list := tc.posts // the policies' collection: GET lists it, POST adds one
			e.sim.ResetLedger()
			for range ticks {
				e.tick(t)
				e.clk.Advance(10 * time.Second)
			}
			if got := e.op(t, op).Properties.Status; got != arm.ProvisioningStateUpdating {
				t.Fatalf("after an hour of a 2-hour upgrade the update is %s, want Updating", got)
			}
			l := e.sim.Ledger()
			reads, total := l.Count("GET", list), l.Total()
			t.Logf("%d ticks: %d policy list reads, %d CS requests (%.2f a tick)", ticks, reads, total, float64(total)/ticks)
			// 10 s doubling to 5 min: 6 reads in the first ~10 minutes,
			// then one each 5 minutes.
			if reads > 20 || reads < 6 {
				t.Errorf("%d policy list reads in %d ticks, want between 6 and 20", reads, ticks)
			}
		})
	}
}
