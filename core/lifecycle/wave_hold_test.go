package lifecycle

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfaults"
)

// childUpdateDuringClusterDelete is the review's case: node pool np1 of
// cluster c1 has an update (a version change) under way in CS when c1 is
// deleted, and np1's document still names the update (a frontend that
// did not cancel it). It returns the cluster delete and the update.
func childUpdateDuringClusterDelete(t *testing.T, e *env) (del, upd string) {
	t.Helper()
	upd = e.update(t, np1(), request{}, func(s *spec) { s.nodePool.VersionID = "4.20.10" })
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	if got := e.op(t, upd).Properties.Status; got != arm.ProvisioningStateUpdating {
		t.Fatalf("the update is %s, want Updating (dispatched)", got)
	}
	// The frontend's cluster delete cancels np1's update and marks np1
	// deleting; both documents are put back as they were.
	ids := []string{document.CosmosID(np1()), document.CosmosID(document.OperationResourceID(testSub, upd))}
	before := map[string][]byte{}
	for _, id := range ids {
		it, err := e.store.Store.Get(context.Background(), testPK, id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = it.Body
	}
	del = e.remove(t, clusterRID("c1"), request{})[0]
	for _, id := range ids {
		it, err := e.store.Store.Get(context.Background(), testPK, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Store.Replace(context.Background(), testPK, id, before[id], it.ETag); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.resource(t, clusterRID("c1")).ClusterServiceDeletionTimestamp(); !ok {
		t.Fatal("the cluster's delete was not dispatched")
	}
	return del, upd
}

// TestChildUpdateDuringClusterDelete: CS's own 404 for a node pool whose
// cluster is being deleted is explained by that delete, not a wave.
// Before, the update's 404 counted as "must exist" every tick, so the
// cluster's delete never completed on CS's own 404 and ended Failed at
// its deadline (a false terminal state), and the update was left forever.
// Now the delete is Succeeded once CS answers its 404, and the update is
// Canceled, as the frontend's cluster delete cancels a child's operation.
func TestChildUpdateDuringClusterDelete(t *testing.T) {
	e, _, _ := upgradeEnv(t, time.Hour)
	e.readyCluster(t, "c2") // live: it corroborates c1's 404 in its tick
	del, upd := childUpdateDuringClusterDelete(t, e)
	e.clk.Advance(3 * time.Minute) // past CS's uninstall: c1 and np1 answer 404
	// Every status write is counted once: the tick's changed count is the
	// transitions it logged, and its canceled count the cancellations.
	changed, canceled := 0, 0
	logged := func(msg string) int { return strings.Count(e.logs.String(), msg) }
	transitions, cancellations := -logged("msg=operation.transition"), -logged(`msg="operation canceled:`)
	for range 3 {
		res := e.tick(t)
		changed += res.Changed
		canceled += res.Canceled
		e.clk.Advance(10 * time.Second)
	}
	transitions += logged("msg=operation.transition")
	cancellations += logged(`msg="operation canceled:`)
	if changed != transitions || canceled != cancellations || canceled == 0 {
		t.Errorf("the ticks counted %d changed and %d canceled; they logged %d transitions and %d cancellations",
			changed, canceled, transitions, cancellations)
	}
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
	got := e.wantOp(t, upd, arm.ProvisioningStateCanceled, arm.CodeCanceled)
	if got.Properties.Error == nil || got.Properties.Error.Message == "" {
		t.Errorf("the canceled update has no message: %+v", got.Properties.Error)
	}
	for _, r := range e.anomalies() {
		if r["verdict"] == VerdictWave {
			t.Errorf("the node pool's 404 under its cluster's delete made a wave: %v", r)
		}
	}
}

// TestLoneMustExist404IsReleased: an update whose node pool CS answers
// its own 404 for (CS lost it; its cluster is not being deleted) holds
// another cluster's delete waveHoldTicks ticks in a row, no more: then it
// is released (logged once, counted on cs.anomaly), the delete completes
// on CS's own 404, and the update, backed off, ends at its deadline.
// Before, it held every 404-based completion for as long as it lived, and
// an update had no deadline.
func TestLoneMustExist404IsReleased(t *testing.T) {
	e, _, _ := upgradeEnv(t, 10*time.Hour, func(c *Config) { c.UpgradeDeadline = 2 * time.Hour })
	faults := e.behindFaults(t, func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/node_pools/np1")
	})
	upd := e.update(t, np1(), request{}, func(s *spec) { s.nodePool.VersionID = "4.20.10" })
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.readyCluster(t, "c2")
	del := e.remove(t, clusterRID("c2"), request{})[0]
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	faults.Set(csfaults.Misrouted) // np1 answers CS's own 404
	e.clk.Advance(2 * time.Minute) // c2 is gone from CS
	ticks := 0
	for ; ticks < 2*waveHoldTicks; ticks++ {
		if e.op(t, del).Properties.Status.IsTerminal() {
			break
		}
		e.tick(t)
		e.clk.Advance(10 * time.Second)
	}
	if ticks != waveHoldTicks {
		t.Fatalf("the delete completed after %d ticks, want %d (the 404 holds it that long, no longer)", ticks, waveHoldTicks)
	}
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
	recs := e.anomalies()
	last := recs[len(recs)-1]
	if last["verdict"] != VerdictReleased || last["must_exist_released"] != "1" || last["level"] != "WARN" {
		t.Errorf("last cs.anomaly = %v, want a Warn released 1", last)
	}
	if n := strings.Count(e.logs.String(), "it no longer holds them"); n != 1 {
		t.Errorf("the release was logged %d times, want once", n)
	}
	if got := e.op(t, upd).Properties.Status; got.IsTerminal() {
		t.Fatalf("the update is %s on a 404 alone", got)
	}
	e.clk.Advance(2 * time.Hour)
	e.tick(t)
	got := e.wantOp(t, upd, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
	if !strings.Contains(got.Properties.Error.Message, "node pool update did not complete before the deadline") {
		t.Errorf("the update's error = %q, want the deadline's", got.Properties.Error.Message)
	}
}
