package app_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/app"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/csfaults"
	"github.com/hcpops/hcpops/harness/simulator"
)

// alertRun is the records of one drive of a cluster create through the
// production assembly and the real handler, with moments of it kept for
// queries that fire in the middle of a run and stop at its end.
type alertRun struct {
	all  []map[string]any
	mid  []map[string]any // at the moment the run is about (see each run)
	opID string           // the operation's UUID, lower case
	// Of the troubled run only: the operation document's id and the host
	// ARM notifications went to.
	docID, sinkHost string
}

// runs are the runs the alert and workbook queries are evaluated over,
// made once per test binary: each drives its own rig.
type runs struct {
	troubled alertRun // scenario(): a CS 503, a batch given up, a failed notification; mid: Provisioning
	clean    alertRun // nothing goes wrong
	stuck    alertRun // the create started 25 minutes ago; mid: still Provisioning
	notify   alertRun // ARM answers 500 seven times; mid: after the sixth failure
	csErrors alertRun // every CS call fails for 40 ticks (about 16 calls: the operation backs off), then CS recovers
	csSlow   alertRun // every CS call takes 40 ms
	budget   alertRun // CS takes 30 ms and a tick has 1 ms
	// misrouted: CS answers its own 404 for every object (and empty
	// lists) for the second tick, while CS has the accepted create; mid:
	// after that tick.
	misrouted alertRun
}

var (
	runsOnce sync.Once
	runsMade *runs
)

func allRuns(t *testing.T) *runs {
	runsOnce.Do(func() { runsMade = makeRuns(t) })
	if runsMade == nil {
		t.Fatal("making the alert runs failed (see the first test that needed them)")
	}
	return runsMade
}

func makeRuns(t *testing.T) *runs {
	fast := map[string]string{"HCPOPS_NOTIFY_BACKOFF_BASE": "1ms", "HCPOPS_NOTIFY_BACKOFF_MAX": "1ms",
		"HCPOPS_POLL_BACKOFF_MAX": "1ms", "HCPOPS_PENDING_ID_GRACE": "1ms", "HCPOPS_DISPATCH_GRACE": "1ms"}
	with := func(extra map[string]string) func(string) map[string]string {
		return func(string) map[string]string {
			m := map[string]string{}
			for k, v := range fast {
				m[k] = v
			}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
	}
	out := &runs{}
	all, mid, tr := scenario(t)
	u, err := url.Parse(tr.sink.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	out.troubled = alertRun{all: all, mid: mid, opID: strings.ToLower(tr.operation().Name()),
		docID: strings.ToLower(tr.operation().ID), sinkHost: u.Host}

	r := newRigEnv(t, with(nil), app.Parts{})
	out.clean = driveCreate(t, r, time.Now(), nil)

	r = newRigEnv(t, with(nil), app.Parts{})
	out.stuck = driveCreate(t, r, time.Now().Add(-25*time.Minute), func(r *rig, run *alertRun) {
		if run.mid == nil && r.operation().Properties.Status == arm.ProvisioningStateProvisioning {
			run.mid = r.logs.records(t)
		}
	})

	r = newRigEnv(t, with(nil), app.Parts{})
	r.sink.failFirst(7)
	out.notify = driveCreate(t, r, time.Now(), func(r *rig, run *alertRun) {
		if run.mid == nil && failedAttempts(r.logs.records(t)) == 6 {
			run.mid = r.logs.records(t)
		}
	})

	r = newRigEnv(t, with(nil), app.Parts{})
	failing := 0
	if err := r.sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}
	out.csErrors = driveCreate(t, r, time.Now(), func(r *rig, run *alertRun) {
		if failing++; failing == 40 {
			run.mid = r.logs.records(t)
			if err := r.sim.SetFaults(simulator.Faults{}); err != nil {
				t.Fatal(err)
			}
		}
	})

	r = newRigEnv(t, with(nil), app.Parts{})
	if err := r.sim.SetLatency(simulator.Latency{Fixed: 40 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	out.csSlow = driveCreate(t, r, time.Now(), nil)

	r = newRigEnv(t, with(map[string]string{"HCPOPS_POLL_BUDGET": "1ms"}), app.Parts{})
	if err := r.sim.SetLatency(simulator.Latency{Fixed: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	out.budget = tickOnly(t, r, time.Now(), 3)

	var faults *csfaults.Proxy
	r = newRigEnv(t, func(simURL string) map[string]string {
		m := with(nil)(simURL)
		f, u := csfaults.NewTestProxy(t, simURL)
		faults, m["CLUSTERS_SERVICE_URL"] = f, u
		return m
	}, app.Parts{})
	ticks := 0
	out.misrouted = driveCreate(t, r, time.Now(), func(r *rig, run *alertRun) {
		switch ticks++; ticks {
		case 1:
			faults.Set(csfaults.Misrouted)
		case 2:
			run.mid = r.logs.records(t)
			faults.Set(csfaults.Healthy)
		}
	})
	return out
}

func failedAttempts(recs []map[string]any) int {
	n := 0
	for _, r := range recs {
		if msgIn(r, "notification.attempt") && str(r, "outcome") == "failed" {
			n++
		}
	}
	return n
}

// driveCreate submits the rig's cluster create as started at start,
// dispatches it and ticks until it succeeded and ARM was notified; after
// each tick, look (if set) may keep a moment of the run.
func driveCreate(t *testing.T, r *rig, start time.Time, look func(*rig, *alertRun)) alertRun {
	t.Helper()
	r.submitAt(start)
	batch := readFile(t, filepath.Join("testdata", "dispatch-cluster-create.json"))
	if resp, body := r.post("/dispatchOperations", batch); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	tick := readFile(t, "../events/testdata/tick.json")
	run := alertRun{opID: opName}
	ticks := 0
	tickOnce := func() {
		ticks++
		if resp, body := r.post("/pollOperations", tick); resp.StatusCode != http.StatusOK {
			t.Fatalf("tick: %d %s", resp.StatusCode, body)
		}
		r.logs.named(t, "poll.tick", ticks) // its line is out
	}
	for {
		if ticks >= 200 {
			t.Fatalf("operation still %s after 200 ticks:\n%s", r.operation().Properties.Status, r.logs.String())
		}
		tickOnce()
		if look != nil {
			look(r, &run)
		}
		op := r.operation().Properties
		if op.Status == arm.ProvisioningStateSucceeded && op.NotificationURI == "" {
			break
		}
		r.sim.Advance(10 * time.Second)
	}
	tickOnce() // one more, which sees nothing active
	run.all = r.logs.records(t)
	return run
}

// tickOnly submits and dispatches the create, then ticks n times.
func tickOnly(t *testing.T, r *rig, start time.Time, n int) alertRun {
	t.Helper()
	r.submitAt(start)
	batch := readFile(t, filepath.Join("testdata", "dispatch-cluster-create.json"))
	r.post("/dispatchOperations", batch) // CS may be too slow for it: the tick's safety net is not under test
	tick := readFile(t, "../events/testdata/tick.json")
	for i := 1; i <= n; i++ {
		if resp, body := r.post("/pollOperations", tick); resp.StatusCode != http.StatusOK {
			t.Fatalf("tick: %d %s", resp.StatusCode, body)
		}
		r.logs.named(t, "poll.tick", i)
	}
	return alertRun{all: r.logs.records(t), opID: opName}
}
