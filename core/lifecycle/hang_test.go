package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestHungClustersServiceIssueRun is the outside run that found the hang:
// poll concurrency 2,
// six dispatched cluster creates, the GETs of the first two polled hang.
// Before the fix every tick ended at its budget with all six Accepted.
// Now the hung calls end at the CS timeout, the four healthy operations
// finish in the same tick, the hung ones are logged once each and backed
// off, and past their deadline they fail at their next attempt, which CS
// again does not answer: no word of CS's holds them (overdue.go).
func TestHungClustersServiceIssueRun(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.PollConcurrency = 2 })
		p := e.throughProxy(t, hungCallTimeout)
		names, ids := e.dispatchedClusters(t, "c", 6)
		sick, healthy := names[:2], names[2:]
		p.Hang(ids[sick[0]], ids[sick[1]])

		res := e.tickWithin(t, time.Minute)
		for _, n := range healthy {
			e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
		}
		for _, n := range sick {
			e.wantOp(t, n, arm.ProvisioningStateAccepted, "")
			lines := e.logLines("clusters service call failed; operation backed off", n)
			if len(lines) != 1 {
				t.Fatalf("operation %s: %d failure lines, want 1:\n%s", n, len(lines), strings.Join(lines, "\n"))
			}
			for _, want := range []string{"cluster_service_id=/api/aro_hcp/v1alpha1/clusters/" + ids[n], "elapsed=", "context deadline exceeded"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("operation %s: failure line lacks %q: %s", n, want, lines[0])
				}
			}
		}
		if res.Polled != 6 || res.Changed != 4 || res.Errors != 2 {
			t.Errorf("tick 1 = %+v, want polled 6, changed 4, errors 2", res)
		}

		// Backed off: the next tick does not ask CS about them at all.
		held := p.HeldFor(ids[sick[0]]) + p.HeldFor(ids[sick[1]])
		res = e.tickWithin(t, time.Minute)
		if res.BackedOff != 2 || res.Errors != 0 {
			t.Errorf("tick 2 = %+v, want 2 backed off, no errors", res)
		}
		if got := p.HeldFor(ids[sick[0]]) + p.HeldFor(ids[sick[1]]); got != held {
			t.Errorf("requests about the backed-off clusters: %d, want still %d", got, held)
		}

		// Past the create deadline (60m from creation) they wait for their
		// next attempt; it meets the hung CS again, and the deadline fails
		// them: one more bounded call each.
		e.clk.Advance(time.Hour)
		held = p.HeldFor(ids[sick[0]]) + p.HeldFor(ids[sick[1]])
		e.engine.pollAt.failed(docRef(e.op(t, sick[0])), e.clk.Now()) // the next attempt is minutes away
		res = e.tickWithin(t, time.Minute)
		e.wantOp(t, sick[0], arm.ProvisioningStateAccepted, "") // its attempt is not due
		expired := res.Expired
		e.clk.Advance(DefaultPollBackoffMax)
		res = e.tickWithin(t, time.Minute)
		res.Expired += expired
		held += 2
		for _, n := range sick {
			op := e.wantOp(t, n, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
			if !strings.Contains(op.Properties.Error.Message, "deadline") {
				t.Errorf("operation %s: error %q does not name the deadline", n, op.Properties.Error.Message)
			}
		}
		if res.Expired != 2 {
			t.Errorf("tick 3 = %+v, want 2 expired", res)
		}
		if got := p.HeldFor(ids[sick[0]]) + p.HeldFor(ids[sick[1]]); got != held {
			t.Errorf("requests about the expired clusters: %d, want still %d", got, held)
		}
		if n := e.engine.pollAt.size(); n != 0 {
			t.Errorf("backoff schedule holds %d entries after every operation ended, want 0", n)
		}
	})
}

// TestHealthyNeverWaitBehindSick: with sick (hung)
// CS objects at the head of the stream, C and 2C of them for C workers,
// every healthy operation advances on the very next tick, and sick ones
// whose backoff ran out are retried only after the healthy ones.
//
// With C sick the CS timeout is longer than the tick's budget, so one sick
// call ahead of a healthy one costs the healthy one the tick. With 2C sick
// the first tick has to meet all of them to learn they are sick, so there
// the timeout is a fraction of the budget, as it is by default (30s of 4m).
func TestHealthyNeverWaitBehindSick(t *testing.T) {
	const c = 2
	tests := []struct {
		sick          int
		timeout       time.Duration
		firstBudget   time.Duration // the tick that meets the sick ones
		healthyInTick bool          // whether the first tick still gets to the healthy ones
	}{
		{sick: c, timeout: time.Minute, firstBudget: 2 * hungCallTimeout},
		{sick: 2 * c, timeout: hungCallTimeout, firstBudget: time.Minute, healthyInTick: true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d sick", tc.sick), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				// One GET per object (CSBatchSize 1), as the outside run counted
				// the calls; TestSickObjectsInABatch is the batched case.
				e := newEnv(t, func(cfg *Config) {
					cfg.PollConcurrency = c
					cfg.PollBackoffBase = 10 * time.Minute
					cfg.CSBatchSize = 1
				})
				p := e.throughProxy(t, tc.timeout)
				names, ids := e.dispatchedClusters(t, "c", tc.sick+3)
				sick, healthy := names[:tc.sick], names[tc.sick:]
				for _, n := range sick {
					p.Hang(ids[n])
				}
				asked := func() int {
					n := 0
					for _, s := range sick {
						n += p.HeldFor(ids[s])
					}
					return n
				}

				res := e.tickWithin(t, tc.firstBudget)
				if got := asked(); got != tc.sick {
					t.Fatalf("tick 1 asked CS %d times about the sick ones, want once each (%d)", got, tc.sick)
				}
				if want := map[bool]int{true: len(healthy), false: 0}[tc.healthyInTick]; res.Changed != want {
					t.Errorf("tick 1 = %+v, want %d changed", res, want)
				}

				// The very next tick: every healthy operation advances, new
				// ones included, and CS is not asked about the sick ones.
				more, _ := e.dispatchedClusters(t, "d", 3)
				res = e.tickWithin(t, time.Minute)
				for _, n := range append(healthy, more...) {
					e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
				}
				if res.Errors != 0 || res.BackedOff != tc.sick || asked() != tc.sick {
					t.Errorf("tick 2 = %+v after %d calls about the sick ones, want no errors, %d backed off, no new calls",
						res, asked(), tc.sick)
				}

				// Their backoff over, the sick ones are due again: new healthy
				// work still goes first, then the sick ones get their turn.
				e.clk.Advance(10 * time.Minute)
				more, _ = e.dispatchedClusters(t, "f", 3)
				e.tickWithin(t, 2*hungCallTimeout) // cuts the sick retries short
				for _, n := range more {
					e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
				}
				for _, n := range sick {
					e.wantOp(t, n, arm.ProvisioningStateAccepted, "")
				}
				if asked() <= tc.sick {
					t.Errorf("the sick clusters were asked %d times in all, want a retry after their backoff", asked())
				}
			})
		})
	}
}

// TestExpiryWriteOutlivesTheBudget: the deadline passes while a CS call
// hangs and the call is cut by the tick's budget, not by the CS timeout.
// The expiry is still written, with a context of its own.
func TestExpiryWriteOutlivesTheBudget(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		// One GET per object; TestBatchCutByTheBudget is the batched case.
		e := newEnv(t, func(c *Config) { c.PollConcurrency = 1; c.CSBatchSize = 1 })
		p := e.throughProxy(t, time.Minute)
		names, ids := e.dispatchedClusters(t, "c", 1)
		p.OnHang(func() { e.clk.Advance(2 * time.Hour) }) // past the 60m create deadline
		p.Hang(ids[names[0]])

		res := e.tickWithin(t, hungCallTimeout)
		op := e.wantOp(t, names[0], arm.ProvisioningStateFailed, arm.CodeInternalServerError)
		if !strings.Contains(op.Properties.Error.Message, "deadline") {
			t.Errorf("error %q does not name the deadline", op.Properties.Error.Message)
		}
		if res.Expired != 1 || p.HeldFor(ids[names[0]]) != 1 {
			t.Errorf("tick = %+v after %d hung calls, want 1 expired after 1", res, p.HeldFor(ids[names[0]]))
		}
		if lines := e.logLines("deadline passed while clusters service could not be read", names[0]); len(lines) != 1 ||
			!strings.Contains(lines[0], "cluster_service_id=") {
			t.Errorf("deadline lines = %q, want one naming the CS object", lines)
		}
	})
}

// TestDispatchHangBounded: a change-feed batch whose CS calls for one
// cluster never answer ends at the CS timeout, though the invocation's own
// deadline is a minute away; the others are dispatched, and the sick one
// costs only itself: logged once with the operation and the call, backed
// off for the tick, and the batch succeeds (the soak saw every such batch
// retried by the host).
func TestDispatchHangBounded(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.PollConcurrency = 2 })
		p := e.throughProxy(t, hungCallTimeout)
		p.Hang("'sick-0'", "\"sick-0\"") // its search and its POST body
		sick := e.create(t, document.KindCluster, clusterRID("sick-0"), request{})
		var healthy []string
		for i := range 3 {
			healthy = append(healthy, e.create(t, document.KindCluster, clusterRID(fmt.Sprintf("ok-%d", i)), request{}))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := e.engine.DispatchDocuments(ctx, e.feed(t))
		if err != nil {
			t.Fatalf("dispatch error = %v, want none: one sick object must not fail the batch", err)
		}
		if ctx.Err() != nil {
			t.Fatalf("dispatch ran to the invocation's deadline")
		}
		if res.Dispatched != 3 || res.HandedOff != 1 {
			t.Errorf("batch = %+v, want the 3 healthy ones dispatched and the sick one handed off", res)
		}
		for i := range healthy {
			if e.resource(t, clusterRID(fmt.Sprintf("ok-%d", i))).ClusterServiceID() == "" {
				t.Errorf("ok-%d has no CS ID", i)
			}
		}
		lines := e.logLines("dispatch failed; the operation is left to the tick", sick)
		if len(lines) != 1 || !strings.Contains(lines[0], "cs_call=ListClusters") || !strings.Contains(lines[0], "elapsed=") ||
			!strings.Contains(lines[0], "next_attempt=") {
			t.Errorf("failure lines = %q, want one naming the CS call, its time and the next attempt", lines)
		}
		if next, ok := e.engine.pollAt.lookup(docRef(e.op(t, sick))); !ok || !next.After(e.clk.Now()) {
			t.Errorf("sick operation's next attempt %v (scheduled %v), want a backoff", next, ok)
		}
	})
}

// TestPollBackoffGrowsToCapAndResets: each failed attempt doubles the wait
// before the next CS call, up to the cap; an answer resets it.
func TestPollBackoffGrowsToCapAndResets(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		// One GET per object, so every attempt is one call; batched, the first
		// attempt is a list and then the GET (TestSickObjectsInABatch).
		e := newEnv(t, func(c *Config) {
			c.PollBackoffBase, c.PollBackoffMax, c.CSBatchSize = 10*time.Second, 40*time.Second, 1
		})
		p := e.throughProxy(t, hungCallTimeout)
		names, ids := e.dispatchedClusters(t, "c", 1)
		key := docRef(e.op(t, names[0]))
		p.Hang(ids[names[0]])
		for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 40 * time.Second} {
			e.tickWithin(t, time.Minute)
			next, ok := e.engine.pollAt.lookup(key)
			if got := next.Sub(e.clk.Now()); !ok || got != want {
				t.Fatalf("after failure %d the next attempt is in %s (scheduled %v), want %s", i+1, got, ok, want)
			}
			if p.HeldFor(ids[names[0]]) != i+1 {
				t.Fatalf("after tick %d CS was asked %d times", i+1, p.HeldFor(ids[names[0]]))
			}
			e.tickWithin(t, time.Minute) // not due: no call
			e.clk.Advance(want)
		}
		p.Heal()
		e.tickWithin(t, time.Minute)
		e.wantOp(t, names[0], arm.ProvisioningStateSucceeded, "")
		if _, ok := e.engine.pollAt.lookup(key); ok {
			t.Errorf("operation still scheduled after CS answered")
		}
	})
}

// TestDeadlineBeforeOrAfterCS: CS is asked before the deadline applies,
// so a cluster that became ready in time succeeds even when the tick comes
// late, and a delete CS is still uninstalling past its deadline is held on
// that word, not failed (overdue.go); only work not dispatched meets its
// deadline without a CS call.
func TestDeadlineBeforeOrAfterCS(t *testing.T) {
	e := newEnv(t)
	create := e.create(t, document.KindCluster, clusterRID("late"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Hour) // ready after 3m; the 60m deadline long past
	e.tick(t)
	e.wantOp(t, create, arm.ProvisioningStateSucceeded, "")

	e.readyCluster(t, "gone")
	d := testDurations()
	d.ClusterUninstalling = 20 * time.Hour
	e.sim.SetDurations(d)
	del := e.remove(t, clusterRID("gone"), request{})[0]
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(13 * time.Hour) // past the 12h delete deadline
	reads := e.sim.Ledger().Total()
	e.tick(t)
	e.wantOp(t, del, arm.ProvisioningStateDeleting, "")
	if n := e.sim.Ledger().Total() - reads; n == 0 {
		t.Error("the delete past its deadline was decided without asking CS")
	}
	if n := len(e.overdueRecords(del)); n != 1 {
		t.Errorf("%d operation.stuck records past the deadline, want 1", n)
	}
}
