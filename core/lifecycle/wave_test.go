package lifecycle

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/csfaults"
)

// A 404 wave is not evidence (wave.go): each case reproduces on the
// tick as it was before the guard (every delete Succeeded in the
// misrouted tick) and the control cases end as they always did.

// behindFaults points the engine at CS through a fault proxy; only
// requests for which only (if set) says so meet its faults.
func (e *env) behindFaults(t testing.TB, only func(*http.Request) bool) *csfaults.Proxy {
	t.Helper()
	faults := csfaults.New(e.fake.Sim)
	e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
		if only != nil && !only(r) {
			return false
		}
		faults.ServeHTTP(w, r)
		return true
	})
	e.cs = e.fake.NewClient(csfake.Config{RetryLimit: 0, Timeout: 10 * time.Second, Recorder: e.calls})
	e.engine = e.newEngine(t)
	return faults
}

// deletesInFlight makes n ready clusters and deletes them: CS is
// uninstalling each (for a minute) when it returns their operations.
func (e *env) deletesInFlight(t testing.TB, prefix string, n int) []string {
	t.Helper()
	var creates []string
	for i := range n {
		creates = append(creates, e.create(t, document.KindCluster, clusterRID(fmt.Sprintf("%s%d", prefix, i)), request{}))
	}
	e.drive(t, creates...)
	var deletes []string
	for i := range n {
		deletes = append(deletes, e.remove(t, clusterRID(fmt.Sprintf("%s%d", prefix, i)), request{})[0])
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, ok := e.resource(t, clusterRID(fmt.Sprintf("%s%d", prefix, i))).ClusterServiceDeletionTimestamp(); !ok {
			t.Fatalf("the delete of %s%d was not dispatched", prefix, i)
		}
	}
	return deletes
}

// acceptedCreates submits n cluster creates and dispatches them: CS has
// accepted each and the resource records its CS ID.
func (e *env) acceptedCreates(t testing.TB, prefix string, n int) []string {
	t.Helper()
	var ops []string
	for i := range n {
		ops = append(ops, e.create(t, document.KindCluster, clusterRID(fmt.Sprintf("%s%d", prefix, i)), request{}))
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if e.resource(t, clusterRID(fmt.Sprintf("%s%d", prefix, i))).ClusterServiceID() == "" {
			t.Fatalf("the create of %s%d was not dispatched", prefix, i)
		}
	}
	return ops
}

// terminal names the operations of names that are terminal.
func (e *env) terminal(t testing.TB, names []string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		if op := e.op(t, n); op != nil && op.Properties.Status.IsTerminal() {
			out = append(out, n+"="+string(op.Properties.Status))
		}
	}
	return out
}

var attrRE = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|\S+)`)

// anomalies are the cs.anomaly lines the engine logged, as attributes.
func (e *env) anomalies() []map[string]string {
	var out []map[string]string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if !strings.Contains(l, "msg="+MsgAnomaly) {
			continue
		}
		rec := map[string]string{}
		for _, m := range attrRE.FindAllStringSubmatch(l, -1) {
			rec[m[1]] = strings.Trim(m[2], `"`)
		}
		out = append(out, rec)
	}
	return out
}

// TestMisroutedCSWithCreatesInFlight is the run: 6 deletes in
// flight and 3 creates CS accepted, and a CS that answers its own 404
// for every object and an empty list for every search. Before the guard
// the tick wrote all 6 deletes Succeeded. Now none completes, the tick
// writes cs.anomaly, and once CS answers again the deletes complete on
// its real 404s.
func TestMisroutedCSWithCreatesInFlight(t *testing.T) {
	e := newEnv(t)
	faults := e.behindFaults(t, nil)
	deletes := e.deletesInFlight(t, "d", 6)
	creates := e.acceptedCreates(t, "c", 3)

	// The window lasts three ticks: the creates are not backed off by
	// their 404s, so every tick of it sees them contradict the deletes'
	// 404s (the soak found the second and third ticks judging by the
	// deletes alone, and the third confirming the second).
	faults.Set(csfaults.Misrouted)
	for tick := range 3 {
		e.tick(t)
		if got := e.terminal(t, append(deletes, creates...)); len(got) != 0 {
			t.Fatalf("tick %d of a misrouted CS: its 404s made operations terminal: %v", tick+1, got)
		}
		e.clk.Advance(time.Second)
	}
	for i := range 6 {
		if !e.live(t, clusterRID(fmt.Sprintf("d%d", i))) {
			t.Errorf("cluster d%d was soft-deleted on a misrouted CS's 404", i)
		}
	}
	recs := e.anomalies()
	if len(recs) != 3 {
		t.Fatalf("cs.anomaly records = %v, want one a tick", recs)
	}
	for _, r := range recs {
		if r["verdict"] != VerdictWave || r["must_exist_absent"] != "3" || r["deletes_held"] != "6" ||
			r["deletes_confirmed"] != "0" || r["level"] != "WARN" {
			t.Fatalf("cs.anomaly record = %v, want a Warn wave with 3 creates absent and 6 deletes held", r)
		}
	}
	if !strings.Contains(recs[0]["sample_ids"], cs.ClustersPath+"/") {
		t.Errorf("cs.anomaly sample_ids = %q, want CS ids", recs[0]["sample_ids"])
	}
	if faults.Answered() == 0 {
		t.Fatal("the fault proxy answered nothing")
	}

	// The next tick judges afresh: CS answers again, and its 404s for
	// the deleted clusters complete them (at most a tick later, since
	// they are most of what it polls).
	faults.Set(csfaults.Healthy)
	e.clk.Advance(2 * time.Minute) // past the simulator's uninstall
	for range 2 {
		e.tick(t)
	}
	for _, d := range deletes {
		e.wantOp(t, d, arm.ProvisioningStateSucceeded, "")
	}
	for _, c := range creates {
		if op := e.op(t, c); op.Properties.Status == arm.ProvisioningStateFailed {
			t.Errorf("create %s failed: %+v", c, op.Properties.Error)
		}
	}
}

// TestOnlyDeletesInFlightMisrouted is the second case: a
// misrouted CS at a quiet hour, when the only work is deletes (2, then
// 6): nothing must exist, no other cluster is live to witness, so each
// 404 is only one read of its confirmation window. Before, the 2 were
// Succeeded in the first tick (too few 404s to be a large share) and the 6
// in the second (the second 404 confirmed the first). Once CS answers
// again, the genuine delete ends within one window of its first 404.
func TestOnlyDeletesInFlightMisrouted(t *testing.T) {
	for _, n := range []int{2, 6} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t)
			faults := e.behindFaults(t, nil)
			deletes := e.deletesInFlight(t, "d", n)
			faults.Set(csfaults.Misrouted)
			misrouted := e.clk.Now()
			for tick := range 3 {
				e.tick(t)
				if got := e.terminal(t, deletes); len(got) != 0 {
					t.Fatalf("tick %d of a misrouted CS completed deletes: %v", tick+1, got)
				}
				e.clk.Advance(10 * time.Second)
			}
			// The genuine delete: CS answers again, showing them
			// uninstalling (which starts their windows again), and removes
			// them a minute after the DELETEs: they complete one window
			// after CS's first genuine 404, and never within one of the
			// misroute.
			faults.Set(csfaults.Healthy)
			for {
				e.tick(t)
				if got := e.terminal(t, deletes); len(got) != 0 || e.clk.Now().Sub(misrouted) > 2*DefaultAbsenceWindow {
					break
				}
				e.clk.Advance(time.Minute)
			}
			if waited := e.clk.Now().Sub(misrouted); waited < DefaultAbsenceWindow || waited > DefaultAbsenceWindow+2*time.Minute {
				t.Errorf("the deletes completed %s after the misroute began, want a window (%s) after CS's uninstall, not before", waited, DefaultAbsenceWindow)
			}
			for _, d := range deletes {
				e.wantOp(t, d, arm.ProvisioningStateSucceeded, "")
			}
		})
	}
}

// TestGenuineBulkDeleteCompletes is the control: only the deleted
// objects answer 404, and clusters CS accepted are live beside them. One
// list answer names the deleted ones and the live ones and returns only
// the live ones: the bulk delete completes in its tick, however large a
// share of the tick it is (before, most of a tick waited a tick).
func TestGenuineBulkDeleteCompletes(t *testing.T) {
	for _, tc := range []struct {
		name            string
		deletes, others int
	}{
		{"small share", 2, 3},
		{"most of the tick", 6, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			deletes := e.deletesInFlight(t, "d", tc.deletes)
			creates := e.acceptedCreates(t, "c", tc.others)
			e.clk.Advance(2 * time.Minute) // CS has removed the deleted ones
			e.tick(t)
			for i, d := range deletes {
				e.wantOp(t, d, arm.ProvisioningStateSucceeded, "")
				if e.live(t, clusterRID(fmt.Sprintf("d%d", i))) {
					t.Errorf("resource d%d still live after its delete succeeded", i)
				}
			}
			for _, c := range creates {
				if op := e.op(t, c); op.Properties.Status == arm.ProvisioningStateFailed {
					t.Errorf("create %s failed: %+v", c, op.Properties.Error)
				}
			}
			for _, r := range e.anomalies() {
				t.Errorf("a genuine bulk delete wrote a cs.anomaly: %v", r)
			}
		})
	}
}

// TestClusterAbsentWithLiveChildren: CS answering 404 for a cluster
// while it answers for the cluster's node pool in the same tick is no
// evidence that the cluster is gone (only its cluster reads are
// misrouted here). Before the guard the cluster's delete was Succeeded.
func TestClusterAbsentWithLiveChildren(t *testing.T) {
	e := newEnv(t)
	clusterReads := func(r *http.Request) bool {
		kind, _ := cs.ParseHref(strings.TrimSuffix(r.URL.Path, "/status"))
		return r.Method == http.MethodGet && (kind == cs.HrefCluster || r.URL.Path == cs.ClustersPath)
	}
	faults := e.behindFaults(t, clusterReads)
	e.readyCluster(t, "c1")
	np := e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{})
	e.drive(t, np)
	names := e.remove(t, clusterRID("c1"), request{})
	if len(names) != 2 {
		t.Fatalf("delete of c1 = %v, want the cluster's and its node pool's", names)
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	faults.Set(csfaults.Misrouted)
	e.tick(t)
	if got := e.terminal(t, names); len(got) != 0 {
		t.Fatalf("a cluster 404 beside its live node pool completed %v", got)
	}
	recs := e.anomalies()
	if len(recs) != 1 || recs[0]["verdict"] != VerdictWave || recs[0]["parents_absent"] != "1" {
		t.Fatalf("cs.anomaly records = %v, want one wave naming the cluster", recs)
	}
	faults.Set(csfaults.Healthy)
	e.drive(t, names...)
	for _, n := range names {
		e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
	}
}
