package lifecycle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/csfaults"
)

// Issue 43's cases, each through a fault front in front of the simulator.

// behind points the engine at CS through h (which passes to the simulator
// what it does not answer) while the returned switch is on.
func (e *env) behind(t testing.TB, h http.Handler) *atomic.Bool {
	t.Helper()
	on := &atomic.Bool{}
	on.Store(true)
	e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
		if !on.Load() {
			return false
		}
		h.ServeHTTP(w, r)
		return true
	})
	e.cs = e.fake.NewClient(csfake.Config{RetryLimit: 0, Timeout: 10 * time.Second, Recorder: e.calls})
	e.engine = e.newEngine(t)
	return on
}

const csClusterRoute = "/api/aro_hcp/v1alpha1/clusters/{id}"

// TestOneBadReplica is the first case: one CS replica of three
// misrouted, so about a third of reads answer CS's own 404 or an empty
// list, with 6 deletes and 2 creates in flight. Before, 2 to 6 of the
// deletes were Succeeded within a few ticks while CS still showed them
// uninstalling. Now none is while CS shows them; once CS removes them they
// complete, corroborated by the live clusters beside them.
func TestOneBadReplica(t *testing.T) {
	e := newEnv(t)
	deletes := e.deletesInFlight(t, "d", 6)
	creates := e.acceptedCreates(t, "c", 2)
	bad := csfaults.NewScoped(e.fake.Sim, csfaults.Misrouted, csfaults.Scope{Share: 1.0 / 3, Rand: rand.NewPCG(43, 1)})
	on := e.behind(t, bad)
	for tick := range 10 { // 50 s: the simulator uninstalls for a minute
		e.tick(t)
		if got := e.terminal(t, deletes); len(got) != 0 {
			t.Fatalf("tick %d: deletes completed while CS shows the clusters uninstalling: %v", tick+1, got)
		}
		e.clk.Advance(5 * time.Second)
	}
	for i := range 6 {
		if !e.live(t, clusterRID(fmt.Sprintf("d%d", i))) {
			t.Errorf("cluster d%d was soft-deleted while CS shows it uninstalling", i)
		}
	}
	// A 404 is held either as not corroborated yet (absence.go) or because
	// live objects beside it answered 404 too (wave.go): which, depends on
	// what the replica misrouted.
	if held := e.logs.String(); bad.Answered() == 0 || !strings.Contains(held, "not corroborated yet") && !strings.Contains(held, MsgDeleteHeld) {
		t.Fatalf("the bad replica answered %d requests and no delete was held: the case was not reproduced", bad.Answered())
	}

	// CS removes them; the bad replica still answers a third of reads.
	e.clk.Advance(time.Minute)
	for range 8 {
		e.tick(t)
		e.clk.Advance(10 * time.Second)
	}
	on.Store(false)
	for _, d := range deletes {
		e.wantOp(t, d, arm.ProvisioningStateSucceeded, "")
	}
	for _, c := range creates {
		if op := e.op(t, c); op.Properties.Status == arm.ProvisioningStateFailed {
			t.Errorf("create %s failed: %+v", c, op.Properties.Error)
		}
	}
}

// TestDeleteRacingSlowCreatePost is the third case: CS takes
// longer to accept a create's POST than the client waits, and the
// customer deletes meanwhile. Before, the DELETE of the pending ID met
// CS's 404, counted as dispatched, the next 404 completed the delete, and
// then the POST landed: an object left ready in CS for ever. Now the
// delete waits out the pending-ID grace, deletes what CS has there (one
// DELETE), and ends Succeeded on corroborated absence.
func TestDeleteRacingSlowCreatePost(t *testing.T) {
	for _, kind := range []document.Kind{document.KindCluster, document.KindNodePool} {
		t.Run(kind.String(), func(t *testing.T) {
			e := newEnv(t)
			rid, route := clusterRID("c1"), csClusterRoute
			if kind == document.KindNodePool {
				e.readyCluster(t, "c1")
				rid, route = np1(), csClusterRoute+"/node_pools/{np}"
			}
			slow := csfaults.NewSlowPost(e.fake.Sim, cs.ClustersPath)
			e.behind(t, slow)
			create := e.create(t, kind, rid, request{})
			if _, err := e.deliver(t); err == nil && slow.Held() == 0 {
				t.Fatal("the create's POST was not held")
			}
			del := e.remove(t, rid, request{})[0]
			if _, err := e.deliver(t); err != nil {
				t.Logf("dispatch: %v", err)
			}
			e.tick(t)
			e.clk.Advance(10 * time.Second)
			if codes := slow.Land(); len(codes) != 1 || codes[0] != http.StatusCreated {
				t.Fatalf("the held POST landed with %v, want one 201", codes)
			}
			href := e.objectHref(t, kind, rid)
			for round := 0; round < 30 && !e.op(t, del).Properties.Status.IsTerminal(); round++ {
				if _, err := e.deliver(t); err != nil {
					t.Logf("dispatch: %v", err)
				}
				e.tick(t)
				e.clk.Advance(time.Minute)
			}
			e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
			if n := e.sim.Ledger().Count(http.MethodDelete, route); n != 1 {
				t.Errorf("%d DELETEs reached CS, want exactly one", n)
			}
			if err := e.csHas(kind, href); cs.Classify(err) != cs.Absent {
				t.Errorf("CS still has %s after the delete succeeded (%v): an orphan", href, err)
			}
			if op := e.op(t, create); op.Properties.Status == arm.ProvisioningStateSucceeded {
				t.Errorf("the create was written Succeeded after its resource's delete")
			}
		})
	}
}

// objectHref is where the create of rid put (or would put) its CS object.
func (e *env) objectHref(t *testing.T, kind document.Kind, rid string) string {
	t.Helper()
	res := e.resource(t, rid)
	if res == nil {
		t.Fatalf("%s is gone before its delete ran", rid)
	}
	if kind == document.KindCluster {
		return res.PendingClusterServiceID()
	}
	return cs.NodePoolHref(e.resource(t, clusterRID("c1")).ClusterServiceID(), lower(res.Name()))
}

// csHas reads CS's object at href straight from the simulator.
func (e *env) csHas(kind document.Kind, href string) error {
	client := e.fake.NewClient(csfake.Config{RetryLimit: 0, Timeout: 10 * time.Second})
	if kind == document.KindCluster {
		_, err := client.GetCluster(context.Background(), href)
		return err
	}
	_, err := client.GetNodePool(context.Background(), href)
	return err
}

// TestMisroutedDelete is the fifth case: a brief misroute answers
// the DELETE itself with CS's own 404. Before, it counted as dispatched:
// CS never got a DELETE, every later poll read ready, and the operation
// waited silently for its 12-hour deadline. Now the DELETE is not
// dispatched (no marker), is sent again every tick, the list that names
// the cluster shows it alive (with or without another cluster to
// witness), and once the misroute ends CS gets exactly one DELETE.
func TestMisroutedDelete(t *testing.T) {
	for _, witness := range []bool{true, false} {
		t.Run(fmt.Sprintf("witness=%v", witness), func(t *testing.T) {
			e := newEnv(t)
			e.readyCluster(t, "c1")
			if witness {
				e.readyCluster(t, "w1")
			}
			bad := csfaults.NewScoped(e.fake.Sim, csfaults.Misrouted, csfaults.Scope{Writes: true})
			on := e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodDelete {
					bad.ServeHTTP(w, r)
					return
				}
				e.fake.Sim.ServeHTTP(w, r)
			}))
			del := e.remove(t, clusterRID("c1"), request{})[0]
			if _, err := e.deliver(t); err != nil {
				t.Logf("dispatch: %v", err)
			}
			// Past the window: a misroute of the DELETE alone never ends it.
			for range 14 {
				e.clk.Advance(time.Minute)
				e.tick(t)
				if _, ok := e.resource(t, clusterRID("c1")).ClusterServiceDeletionTimestamp(); ok {
					t.Fatal("a DELETE answered with CS's own 404 was counted as dispatched")
				}
				if got := e.terminal(t, []string{del}); len(got) != 0 {
					t.Fatalf("the delete ended %v while CS has the cluster ready", got)
				}
			}
			if n := strings.Count(e.logs.String(), "not dispatched until another answer corroborates it"); n < 10 || bad.Answered() < 10 {
				t.Errorf("the DELETE was answered 404 %d times and retried %d; want it sent again every tick", bad.Answered(), n)
			}
			on.Store(false) // the misroute ends
			e.clk.Advance(time.Minute)
			e.drive(t, del)
			e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
			if n := e.sim.Ledger().Count(http.MethodDelete, csClusterRoute); n != 1 {
				t.Errorf("%d DELETEs reached CS, want one", n)
			}
		})
	}
}

// TestLostDeleteIsSentAgain: CS's 2xx for a DELETE that never reached it
// (here the front answers 204 in its place), so the cluster stays ready.
// Before, the delete waited for its deadline; now, a grace after the
// marker, it sends the DELETE again (logged once) and completes.
func TestLostDeleteIsSentAgain(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	lost := &atomic.Bool{}
	lost.Store(true)
	e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && lost.CompareAndSwap(true, false) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		e.fake.Sim.ServeHTTP(w, r)
	}))
	del := e.remove(t, clusterRID("c1"), request{})[0]
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.resource(t, clusterRID("c1")).ClusterServiceDeletionTimestamp(); !ok {
		t.Fatal("the DELETE's 204 was not counted as dispatched")
	}
	e.tick(t) // CS shows it ready, but the DELETE was just sent
	if n := e.sim.Ledger().Count(http.MethodDelete, csClusterRoute); n != 0 {
		t.Fatalf("%d DELETEs reached CS within the grace, want none yet", n)
	}
	e.drive(t, del)
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
	if n := e.sim.Ledger().Count(http.MethodDelete, csClusterRoute); n != 1 {
		t.Errorf("%d DELETEs reached CS, want one (the one sent again)", n)
	}
	if n := strings.Count(e.logs.String(), "sent the DELETE again"); n != 1 {
		t.Errorf("the DELETE was sent again %d times, want once", n)
	}
}

// TestMisrouteOutlastsEveryHold: faults shaped by kind, by route and by
// share, lasting twice the confirmation window, while only deletes are in
// flight and live objects of the kind are there to witness. None of the
// deletes completes however long it lasts: every tick's witnesses answer
// wrong (a cs.anomaly wave, naming them), and the tick counts for
// nothing. Before, these deletes were Succeeded in the first ticks. Once
// CS answers right, they complete in one tick.
func TestMisrouteOutlastsEveryHold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  document.Kind
		scope csfaults.Scope
	}{
		{"clusters, every request", document.KindCluster, csfaults.Scope{}},
		{"clusters, by route", document.KindCluster, csfaults.Scope{Route: cs.ClustersPath}},
		{"node pools, by kind", document.KindNodePool, csfaults.Scope{Kind: "node_pools"}},
		{"node pools, half the requests", document.KindNodePool, csfaults.Scope{Kind: "node_pools", Share: 0.5, Rand: rand.NewPCG(7, 7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var victims, witnesses []string
			if tc.kind == document.KindCluster {
				e.readyCluster(t, "w1")
				e.readyCluster(t, "d1")
				victims, witnesses = []string{clusterRID("d1")}, []string{clusterRID("w1")}
			} else {
				e.readyCluster(t, "c1")
				for _, np := range []string{"np1", "np2"} {
					e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", np), request{}))
				}
				victims, witnesses = []string{nodePoolRID("c1", "np1")}, []string{nodePoolRID("c1", "np2")}
			}
			del := e.remove(t, victims[0], request{})[0]
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute) // CS has removed it: its 404 is genuine now
			sc := tc.scope
			sc.Clock = e.clk.Now
			sc.Until = e.clk.Now().Add(2 * DefaultAbsenceWindow)
			bad := csfaults.NewScoped(e.fake.Sim, csfaults.Misrouted, sc)
			e.behind(t, bad)
			held := 0
			for e.clk.Now().Before(sc.Until) {
				e.tick(t)
				if got := e.terminal(t, []string{del}); len(got) != 0 {
					if tc.scope.Share > 0 {
						break // a share: some ticks meet only the good replica, and then CS's word is whole
					}
					t.Fatalf("the delete ended %v %s into a misroute its witnesses answer wrong in", got, e.clk.Now().Sub(sc.Until.Add(-2*DefaultAbsenceWindow)))
				}
				held++
				e.clk.Advance(30 * time.Second)
			}
			recs := e.anomalies()
			if bad.Answered() == 0 || len(recs) == 0 {
				t.Fatalf("the fault answered %d requests and %d cs.anomaly records were written: not reproduced", bad.Answered(), len(recs))
			}
			w := e.resource(t, witnesses[0]).ClusterServiceID()
			if r := recs[0]; r["verdict"] != VerdictWave || r["level"] != "WARN" || !strings.Contains(r["witness_ids"], w) ||
				r["deletes_held"] != "1" {
				t.Errorf("cs.anomaly = %v, want a Warn wave naming witness %s and one delete held", r, w)
			}
			if tc.scope.Share == 0 && held < 2*int(DefaultAbsenceWindow/(30*time.Second))-1 {
				t.Errorf("held %d ticks, want the whole fault", held)
			}
			// The operator sees why it waits: one Warn for the hold, which
			// `ops` shows as the delete's last problem.
			if n := strings.Count(e.logs.String(), "level=WARN msg=\""+MsgDeleteHeld); tc.scope.Share == 0 && n != 1 {
				t.Errorf("%d %q warnings for the held delete, want one", n, MsgDeleteHeld)
			}
			e.tick(t) // the fault is over
			e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
			if !e.live(t, witnesses[0]) {
				t.Errorf("the witness %s was touched", witnesses[0])
			}
		})
	}
}

// TestCreateLandingAfterItsResourceWentDeletesIt: the create's POST
// returns after its resource was deleted (here the resource document is
// removed while CS is accepting the POST). Nobody else would delete the
// object, so the create does: one DELETE, no orphan. Before, the created
// cluster was left ready in CS.
func TestCreateLandingAfterItsResourceWentDeletesIt(t *testing.T) {
	e := newEnv(t)
	rid := clusterRID("c1")
	e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == cs.ClustersPath {
			if err := e.store.Store.SoftDelete(r.Context(), testPK, document.CosmosID(rid)); err != nil {
				t.Errorf("deleting the resource during its POST: %v", err)
			}
		}
		e.fake.Sim.ServeHTTP(w, r)
	}))
	e.create(t, document.KindCluster, rid, request{})
	if _, err := e.deliver(t); err != nil {
		t.Logf("dispatch: %v", err)
	}
	if n := e.csPosts(cs.ClustersPath); n != 1 {
		t.Fatalf("%d cluster POSTs reached CS, want one", n)
	}
	if n := e.sim.Ledger().Count(http.MethodDelete, csClusterRoute); n != 1 {
		t.Errorf("%d DELETEs reached CS, want one for the cluster the create made", n)
	}
	if n := strings.Count(e.logs.String(), "deleted what the create made"); n != 1 {
		t.Errorf("the removal was logged %d times, want once", n)
	}
}

// TestSickWitnessHoldsNothing: a witness CS gives no word about (a body
// not CS's own, every request about it, lists naming it included) is not
// read again for a while, so the delete beside it completes on its own
// window rather than waiting forever. Before, the soak's sick objects,
// live and not deleting, were picked as witnesses and held every delete
// of their subscription to the end of the run. CS's own 404 for a
// witness still holds (TestMisrouteOutlastsEveryHold).
func TestSickWitnessHoldsNothing(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AbsenceWindow = 2 * time.Minute })
	e.readyCluster(t, "w1")
	e.readyCluster(t, "d1")
	sick := e.resource(t, clusterRID("w1")).ClusterServiceID()
	sickID := sick[strings.LastIndex(sick, "/")+1:]
	del := e.remove(t, clusterRID("d1"), request{})[0]
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Minute) // CS has removed d1: its 404 is genuine
	garbled := 0
	e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path+r.URL.RawQuery, sickID) {
			garbled++
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("<html>garbled</html>"))
			return
		}
		e.fake.Sim.ServeHTTP(w, r)
	}))
	for range 12 {
		e.tick(t)
		if len(e.terminal(t, []string{del})) > 0 {
			break
		}
		e.clk.Advance(30 * time.Second)
	}
	if garbled == 0 {
		t.Fatal("no request about the sick witness was made: not reproduced")
	}
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
}

// TestLoneChildHeldByAnotherClustersChild: a node pool with no sibling
// still has witnesses of its kind: another cluster's node pools, read
// through the same route. A misroute of node pools that outlasts the
// confirmation window holds its delete; without them it completed once
// the window passed (the simulation's seed 5820, an external auth).
func TestLoneChildHeldByAnotherClustersChild(t *testing.T) {
	e := newEnv(t)
	for _, c := range []string{"c1", "c2"} {
		e.readyCluster(t, c)
		e.drive(t, e.create(t, document.KindNodePool, nodePoolRID(c, "np1"), request{}))
	}
	del := e.remove(t, nodePoolRID("c1", "np1"), request{})[0]
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Minute) // CS has removed it: its 404 is genuine
	sc := csfaults.Scope{Kind: "node_pools", Clock: e.clk.Now, Until: e.clk.Now().Add(2 * DefaultAbsenceWindow)}
	bad := csfaults.NewScoped(e.fake.Sim, csfaults.Misrouted, sc)
	e.behind(t, bad)
	for e.clk.Now().Before(sc.Until) {
		e.tick(t)
		if got := e.terminal(t, []string{del}); len(got) != 0 {
			t.Fatalf("the lone node pool's delete ended %v inside a node pool misroute another cluster's node pool answers wrong in", got)
		}
		e.clk.Advance(30 * time.Second)
	}
	if bad.Answered() == 0 {
		t.Fatal("the fault answered nothing: not reproduced")
	}
	e.tick(t) // the fault is over
	for range absenceReads + 1 {
		e.clk.Advance(DefaultAbsenceWindow / 2)
		e.tick(t)
	}
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
	if !e.live(t, nodePoolRID("c2", "np1")) {
		t.Error("the witness was touched")
	}
}

// TestUnreadablePastDeadlineHoldsOnTheLastWord: an update CS accepted
// (Updating) whose deadline passes while CS gives no word of its own on it
// is held on CS's last word, not written Failed; once CS answers again,
// its word decides. No word: answers not CS's own (a cache serving other
// objects; the simulation's seed 40534), or CS's own 404 for the object it
// accepted, which the tick holds as no evidence until corroborated (a
// third of reads misrouted; seed 10371 failed the update while CS was
// updating).
func TestUnreadablePastDeadlineHoldsOnTheLastWord(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer answer
	}{
		{"an answer not CS's own", answer{http.StatusOK, "text/html", "<html>not CS</html>"}},
		{"CS's own 404 for the object it accepted", csOwn(http.StatusNotFound, "Node pool 'np1' not found")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.UpgradeDeadline = 20 * time.Minute })
			e.readyCluster(t, "c1")
			np := nodePoolRID("c1", "np1")
			e.drive(t, e.create(t, document.KindNodePool, np, request{}))
			op := e.update(t, np, request{}, func(s *spec) { s.nodePool.Replicas = 5 })
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			if got := e.op(t, op).Properties.Status; got != arm.ProvisioningStateUpdating {
				t.Fatalf("update is %s after dispatch, want Updating", got)
			}
			on := e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.Path, "/node_pools") {
					tc.answer.write(w)
					return
				}
				e.fake.Sim.ServeHTTP(w, r)
			}))
			e.clk.Advance(25 * time.Minute) // past the deadline, CS gives no word
			for range 3 {
				e.tick(t)
				e.clk.Advance(time.Minute)
			}
			if got := e.op(t, op).Properties.Status; got.IsTerminal() {
				t.Fatalf("update is %s past its deadline while CS gave no word; want it held on CS's last word", got)
			}
			if !strings.Contains(e.logs.String(), MsgStuck) {
				t.Error("the held update wrote no operation.stuck record")
			}
			on.Store(false)
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		})
	}
}

// TestNoWordFromWitnessesIsNoEvidence: the simulation's seed 25233. A
// cluster delete whose reads a misroute answers with CS's own 404 while
// every read of the live clusters beside it fails (a storm: no word at
// all) was completed once its window passed: the silent witnesses were
// muted, and with none left to read the 404s counted as if CS had no
// other cluster. Witnesses CS gives no word about are no evidence: the
// delete stays held however long that lasts, and completes once CS
// answers right and no longer has the cluster.
func TestNoWordFromWitnessesIsNoEvidence(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "w1")
	e.readyCluster(t, "w2")
	del := e.deletesInFlight(t, "d", 1)[0]
	target := e.resource(t, clusterRID("d0")).ClusterServiceID()
	on := e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, target):
			csOwn(http.StatusNotFound, "Cluster not found").write(w) // misrouted: CS still has it
		case strings.HasPrefix(r.URL.Path, cs.ClustersPath):
			w.WriteHeader(http.StatusServiceUnavailable) // a storm on every other cluster read
		default:
			e.fake.Sim.ServeHTTP(w, r)
		}
	}))
	for tick := range 60 { // 30 minutes: three absence windows
		e.tick(t)
		if got := e.terminal(t, []string{del}); len(got) != 0 {
			t.Fatalf("tick %d: the delete ended (%v) while CS gave no word about any live cluster beside it", tick+1, got)
		}
		e.clk.Advance(30 * time.Second)
	}
	on.Store(false)
	e.clk.Advance(2 * time.Minute) // the simulator finishes uninstalling
	e.drive(t, del)
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
}

// TestChildNeverCreatedOnOne404 is seed 60168: an external auth whose
// resource does not record its CS object (the create's POST landed after
// it stopped waiting) is updated while CS misroutes reads of external
// auths, its own and its live sibling's alike. Before, the first 404
// failed the update "never created" while CS held the object; now the
// 404 waits for a tick whose answers corroborate it, and once CS answers
// right the object is recorded and updated.
func TestChildNeverCreatedOnOne404(t *testing.T) {
	e := newEnv(t)
	readyChild(t, e, document.KindExternalAuth, externalAuthRID("c1", "ea2"))
	readyChild(t, e, document.KindExternalAuth, ea1())
	edit(t, e, ea1(), func(s obj) { delete(s, "clusterServiceID") })
	misroute := e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/external_auths") {
			csOwn(http.StatusNotFound, "not found").write(w)
			return
		}
		e.sim.ServeHTTP(w, r)
	}))
	op := e.update(t, ea1(), request{}, func(s *spec) { s.externalAuth.Audiences = []string{"app-1", "app-2"} })
	for range 30 {
		_, _ = e.deliver(t)
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	e.wantOp(t, op, arm.ProvisioningStateAccepted, "")
	if !strings.Contains(e.logs.String(), "update not failed as never created on clusters service's 404 this tick") {
		t.Error("no log line says why the update waits")
	}
	misroute.Store(false)
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	if e.resource(t, ea1()).ClusterServiceID() == "" {
		t.Error("the object CS had was not recorded as the resource's")
	}
}

// TestChildNeverCreatedWithNoWitness: a node pool CS really does not have,
// with no live sibling to witness for it, is failed "never created" only
// once its 404 has held over the confirmation window (3 reads at least),
// as a lone delete's is: not at the first 404.
func TestChildNeverCreatedWithNoWitness(t *testing.T) {
	e := newEnv(t)
	readyChild(t, e, document.KindNodePool, np1())
	href := e.resource(t, np1()).ClusterServiceID()
	edit(t, e, np1(), func(s obj) { delete(s, "clusterServiceID") })
	if err := e.cs.DeleteNodePool(context.Background(), href); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Minute) // CS has none now
	op := e.update(t, np1(), request{}, func(s *spec) { s.nodePool.Replicas = 5 })
	for range 5 {
		_, _ = e.deliver(t)
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	e.wantOp(t, op, arm.ProvisioningStateAccepted, "")
	for range 10 {
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	if got := e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInternalServerError); got.Properties.Error.Message != "The node pool was never created, so it cannot be updated." {
		t.Errorf("error message = %q", got.Properties.Error.Message)
	}
}
