package apptest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/csfaults"
	"github.com/hcpops/hcpops/harness/simulator"
)

// Shared makes the Runs once for a test binary: a package that needs them
// declares one and asks it for them.
type Shared struct {
	once sync.Once
	runs *Runs
}

// Get is the Runs, made by the first caller (whose t then fails if
// making them fails; the others fail pointing at it).
func (s *Shared) Get(t *testing.T) *Runs {
	t.Helper()
	s.once.Do(func() { s.runs = MakeRuns(t) })
	if s.runs == nil {
		t.Fatal("making the runs failed (see the first test that needed them)")
	}
	return s.runs
}

// AlertRun is the records of one drive of a cluster create through the
// production assembly and the real handler, with moments of it kept for
// queries that fire in the middle of a run and stop at its end.
type AlertRun struct {
	All  []map[string]any
	Mid  []map[string]any // at the moment the run is about (see each run)
	OpID string           // the operation's UUID, lower case
	// Of the troubled run only: the operation document's id and the host
	// ARM notifications went to.
	DocID, SinkHost string
}

// Runs are the runs the alert, workbook and telemetry queries are
// evaluated over (MakeRuns): each drives its own Rig. They take seconds:
// a test binary makes them once.
type Runs struct {
	Troubled AlertRun // Scenario(): a CS 503, a batch given up, a failed notification; mid: Provisioning
	Clean    AlertRun // nothing goes wrong
	Stuck    AlertRun // the create started 25 minutes ago; mid: still Provisioning
	Notify   AlertRun // ARM answers 500 seven times; mid: after the sixth failure
	CSErrors AlertRun // every CS call fails for 40 ticks (about 16 calls: the operation backs off), then CS recovers
	CSSlow   AlertRun // every CS call takes 40 ms
	Budget   AlertRun // CS takes 30 ms and a tick has 1 ms
	// Misrouted: CS answers its own 404 for every object (and empty
	// lists) for the second tick, while CS has the accepted create; mid:
	// after that tick.
	Misrouted AlertRun
}

func MakeRuns(t *testing.T) *Runs {
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
	out := &Runs{}
	all, mid, tr := Scenario(t)
	u, err := url.Parse(tr.Sink.URL())
	if err != nil {
		t.Fatal(err)
	}
	out.Troubled = AlertRun{All: all, Mid: mid, OpID: strings.ToLower(tr.Operation().Name()),
		DocID: strings.ToLower(tr.Operation().ID), SinkHost: u.Host}

	r := New(t, Options{Settings: with(nil)})
	out.Clean = DriveCreate(t, r, time.Now(), nil)

	r = New(t, Options{Settings: with(nil)})
	out.Stuck = DriveCreate(t, r, time.Now().Add(-25*time.Minute), func(r *Rig, run *AlertRun) {
		if run.Mid == nil && r.Operation().Properties.Status == arm.ProvisioningStateProvisioning {
			run.Mid = r.Logs.Records(t)
		}
	})

	r = New(t, Options{Settings: with(nil)})
	r.Sink.FailFirst(7)
	out.Notify = DriveCreate(t, r, time.Now(), func(r *Rig, run *AlertRun) {
		if run.Mid == nil && FailedAttempts(r.Logs.Records(t)) == 6 {
			run.Mid = r.Logs.Records(t)
		}
	})

	r = New(t, Options{Settings: with(nil)})
	failing := 0
	if err := r.Sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}
	out.CSErrors = DriveCreate(t, r, time.Now(), func(r *Rig, run *AlertRun) {
		if failing++; failing == 40 {
			run.Mid = r.Logs.Records(t)
			if err := r.Sim.SetFaults(simulator.Faults{}); err != nil {
				t.Fatal(err)
			}
		}
	})

	r = New(t, Options{Settings: with(nil)})
	if err := r.Sim.SetLatency(simulator.Latency{Fixed: 40 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	out.CSSlow = DriveCreate(t, r, time.Now(), nil)

	r = New(t, Options{Settings: with(map[string]string{"HCPOPS_POLL_BUDGET": "1ms"})})
	if err := r.Sim.SetLatency(simulator.Latency{Fixed: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	out.Budget = TickOnly(t, r, time.Now(), 3)

	var faults *csfaults.Proxy
	r = New(t, Options{Settings: func(simURL string) map[string]string {
		m := with(nil)(simURL)
		f, u := csfaults.NewTestProxy(t, simURL)
		faults, m["CLUSTERS_SERVICE_URL"] = f, u
		return m
	}})
	ticks := 0
	out.Misrouted = DriveCreate(t, r, time.Now(), func(r *Rig, run *AlertRun) {
		switch ticks++; ticks {
		case 1:
			faults.Set(csfaults.Misrouted)
		case 2:
			run.Mid = r.Logs.Records(t)
			faults.Set(csfaults.Healthy)
		}
	})
	return out
}

func FailedAttempts(recs []map[string]any) int {
	n := 0
	for _, r := range recs {
		if MsgIn(r, "notification.attempt") && Str(r, "outcome") == "failed" {
			n++
		}
	}
	return n
}

// DriveCreate submits the rig's cluster create as started at start,
// dispatches it and ticks until it succeeded and ARM was notified; after
// each tick, look (if set) may keep a moment of the run.
func DriveCreate(t *testing.T, r *Rig, start time.Time, look func(*Rig, *AlertRun)) AlertRun {
	t.Helper()
	r.SubmitAt(start)
	batch := ReadFile(t, "app/testdata/dispatch-cluster-create.json")
	if resp, body := r.Post("/dispatchOperations", batch); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	run := AlertRun{OpID: OpName}
	for ticks := 0; ; ticks++ {
		if ticks >= 200 {
			t.Fatalf("operation still %s after 200 ticks:\n%s", r.Operation().Properties.Status, r.Logs.String())
		}
		r.Tick()
		if look != nil {
			look(r, &run)
		}
		op := r.Operation().Properties
		if op.Status == arm.ProvisioningStateSucceeded && op.NotificationURI == "" {
			break
		}
		r.Sim.Advance(10 * time.Second)
	}
	r.Tick() // one more, which sees nothing active
	run.All = r.Logs.Records(t)
	return run
}

// TickOnly submits and dispatches the create, then ticks n times.
func TickOnly(t *testing.T, r *Rig, start time.Time, n int) AlertRun {
	t.Helper()
	r.SubmitAt(start)
	batch := ReadFile(t, "app/testdata/dispatch-cluster-create.json")
	r.Post("/dispatchOperations", batch) // CS may be too slow for it: the tick's safety net is not under test
	for range n {
		r.Tick()
	}
	return AlertRun{All: r.Logs.Records(t), OpID: OpName}
}

// Scenario drives one cluster create through the production assembly and
// the real handler, with a CS failure and a failed ARM notification on the
// way, and returns every record written. mid holds the records written up
// to the operation's first non-terminal transition (a moment it is
// "stuck" for the queries).
func Scenario(t *testing.T) (all, mid []map[string]any, r *Rig) {
	t.Helper()
	r = New(t, Options{Settings: SettingsOf(map[string]string{
		"HCPOPS_NOTIFY_BACKOFF_BASE": "1ms", "HCPOPS_NOTIFY_BACKOFF_MAX": "1ms", "HCPOPS_POLL_BACKOFF_MAX": "1ms",
		"HCPOPS_PENDING_ID_GRACE": "1ms"})})
	r.Sink.FailFirst(1)
	r.SubmitAt(time.Now()) // the deadline runs on the engine's real clock
	batch := ReadFile(t, "app/testdata/dispatch-cluster-create.json")
	// The last delivery of a batch fails on a CS 503: the host will
	// checkpoint past it, and the batch is given up.
	var last map[string]any
	if err := json.Unmarshal(batch, &last); err != nil {
		t.Fatal(err)
	}
	last["Metadata"].(map[string]any)["RetryContext"] = map[string]any{"RetryCount": 5, "MaxRetryCount": 5}
	lastBody, _ := json.Marshal(last)
	if err := r.Sim.FailNext(1, http.StatusServiceUnavailable); err != nil {
		t.Fatal(err)
	}
	if resp, body := r.Post("/dispatchOperations", lastBody); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("failing last delivery: %d %s, want 500", resp.StatusCode, body)
	}
	// The change feed delivers the operation again (a later write), and
	// this time CS answers.
	if resp, body := r.Post("/dispatchOperations", batch); resp.StatusCode != http.StatusOK {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	tick := ReadFile(t, "events/testdata/tick.json")
	ticks := 0
	// doTick reports whether the tick asked CS and got answers.
	doTick := func() bool {
		ticks++
		if resp, body := r.Post("/pollOperations", tick); resp.StatusCode != http.StatusOK {
			t.Fatalf("tick: %d %s", resp.StatusCode, body)
		}
		rec := r.Logs.Named(t, "poll.tick", ticks)[ticks-1] // its line is out
		return Num(rec, "cs_calls") > 0 && Num(rec, "cs_errors") == 0
	}
	// A CS 503 on the first poll: the tick counts it, the operation waits.
	if err := r.Sim.FailNext(1, http.StatusServiceUnavailable); err != nil {
		t.Fatal(err)
	}
	asked := doTick()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("operation still %s: %+v\nlog:\n%s", r.Operation().Properties.Status, r.Operation().Properties.Error, r.Logs.String())
		}
		st := r.Operation().Properties.Status
		if st == arm.ProvisioningStateProvisioning && mid == nil {
			mid = r.Logs.Records(t)
		}
		if st == arm.ProvisioningStateSucceeded && r.Operation().Properties.NotificationURI == "" {
			break
		}
		if asked {
			r.Sim.Advance(10 * time.Second) // small steps, each seen by a tick: installing shows
		}
		asked = doTick()
	}
	if mid == nil {
		t.Fatalf("the operation never showed Provisioning between ticks: %s", r.Logs.String())
	}
	return r.Logs.Records(t), mid, r
}

// SettingsOf is Options.Settings for settings that do not name the
// simulator's URL.
func SettingsOf(m map[string]string) func(string) map[string]string {
	return func(string) map[string]string { return m }
}
