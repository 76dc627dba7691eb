package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// telemetryNames are the records docs/functions.md documents.
var telemetryNames = []string{"poll.tick", "dispatch.batch", "operation.dispatched", "operation.transition",
	"notification.attempt", "changefeed.batch_given_up", "poll.view_rebuilt"}

// scenario drives one cluster create through the production assembly and
// the real handler, with a CS failure and a failed ARM notification on the
// way, and returns every record written. mid holds the records written up
// to the operation's first non-terminal transition (a moment it is
// "stuck" for the queries).
func scenario(t *testing.T) (all, mid []map[string]any, r *rig) {
	t.Helper()
	r = newRigEnv(t, withSettings(map[string]string{
		"HCPOPS_NOTIFY_BACKOFF_BASE": "1ms", "HCPOPS_NOTIFY_BACKOFF_MAX": "1ms", "HCPOPS_POLL_BACKOFF_MAX": "1ms",
		"HCPOPS_PENDING_ID_GRACE": "1ms"}), Parts{})
	r.sink.failFirst(1)
	r.submitAt(time.Now()) // the deadline runs on the engine's real clock
	batch := readFile(t, filepath.Join("testdata", "dispatch-cluster-create.json"))
	// The last delivery of a batch fails on a CS 503: the host will
	// checkpoint past it, and the batch is given up.
	var last map[string]any
	if err := json.Unmarshal(batch, &last); err != nil {
		t.Fatal(err)
	}
	last["Metadata"].(map[string]any)["RetryContext"] = map[string]any{"RetryCount": 5, "MaxRetryCount": 5}
	lastBody, _ := json.Marshal(last)
	if err := r.sim.FailNext(1, http.StatusServiceUnavailable); err != nil {
		t.Fatal(err)
	}
	if resp, body := r.post("/dispatchOperations", lastBody); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("failing last delivery: %d %s, want 500", resp.StatusCode, body)
	}
	// The change feed delivers the operation again (a later write), and
	// this time CS answers.
	if resp, body := r.post("/dispatchOperations", batch); resp.StatusCode != http.StatusOK {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	tick := readFile(t, "../functions/pollOperations/testdata/tick.json")
	ticks := 0
	// doTick reports whether the tick asked CS and got answers.
	doTick := func() bool {
		ticks++
		if resp, body := r.post("/pollOperations", tick); resp.StatusCode != http.StatusOK {
			t.Fatalf("tick: %d %s", resp.StatusCode, body)
		}
		rec := r.logs.named(t, "poll.tick", ticks)[ticks-1] // its line is out
		return num(rec, "cs_calls") > 0 && num(rec, "cs_errors") == 0
	}
	// A CS 503 on the first poll: the tick counts it, the operation waits.
	if err := r.sim.FailNext(1, http.StatusServiceUnavailable); err != nil {
		t.Fatal(err)
	}
	asked := doTick()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("operation still %s: %+v\nlog:\n%s", r.operation().Properties.Status, r.operation().Properties.Error, r.logs.buf.String())
		}
		st := r.operation().Properties.Status
		if st == arm.ProvisioningStateProvisioning && mid == nil {
			mid = r.logs.records(t)
		}
		if st == arm.ProvisioningStateSucceeded && r.operation().Properties.NotificationURI == "" {
			break
		}
		if asked {
			r.sim.Advance(10 * time.Second) // small steps, each seen by a tick: installing shows
		}
		asked = doTick()
	}
	if mid == nil {
		t.Fatalf("the operation never showed Provisioning between ticks: %s", r.logs.buf.String())
	}
	return r.logs.records(t), mid, r
}

// TestTelemetry holds the shapes of the records (golden) and evaluates
// each documented query's filter over them.
func TestTelemetry(t *testing.T) {
	all, mid, r := scenario(t)
	t.Run("golden shapes", func(t *testing.T) { goldenShapes(t, all) })
	t.Run("queries match the docs", func(t *testing.T) { docsQueriesMatch(t, all) })

	opID := strings.ToLower(r.operation().Name())
	t.Run("stuck", func(t *testing.T) {
		at := latest(mid).Add(31 * time.Minute)
		got := stuck(mid, at, 30*time.Minute)
		if len(got) != 1 || got[0].operationID != opID || got[0].state != "Provisioning" || got[0].started.IsZero() {
			t.Fatalf("stuck at %v = %+v, want the operation in Provisioning", at, got)
		}
		if got[0].lastProblem == "" {
			t.Errorf("stuck operation has no last problem; the CS 503 was logged about it")
		}
		if got := stuck(all, latest(all).Add(31*time.Minute), 30*time.Minute); len(got) != 0 {
			t.Errorf("after it succeeded, stuck = %+v", got)
		}
		if got := stuck(mid, latest(mid).Add(time.Minute), 30*time.Minute); len(got) != 0 {
			t.Errorf("one minute in, stuck = %+v, want none", got)
		}
	})
	t.Run("problems", func(t *testing.T) {
		got := problems(all)
		// The failed dispatch first, the failed notification last.
		p := got[opID]
		if len(got) != 1 || len(p.whats) < 2 || p.whats[0] != "dispatch failed; the batch is retried" ||
			p.what != "notification.attempt" || !strings.Contains(p.err, "500") {
			t.Errorf("problems = %+v, want those of %s from its failed dispatch to its failed notification", got, opID)
		}
	})
	t.Run("given_up", func(t *testing.T) {
		got := givenUp(all)
		if len(got) != 1 || len(got[0]) != 1 || got[0][0] != strings.ToLower(r.operation().ID) {
			t.Errorf("given up = %v, want the operation document of the failed last delivery", got)
		}
	})
	t.Run("transitions", func(t *testing.T) {
		got := transitionsByOutcome(all)
		if got["Provisioning"] != 1 || got["Succeeded"] != 1 || len(got) != 2 {
			t.Errorf("transitions by outcome = %v", got)
		}
	})
	t.Run("notification_failures", func(t *testing.T) {
		u, _ := url.Parse(r.sink.srv.URL)
		got := notificationFailures(all)
		if got[u.Host] != 1 || len(got) != 1 {
			t.Errorf("failures by host = %v, want 1 for %s", got, u.Host)
		}
	})
	t.Run("ticks", func(t *testing.T) {
		n, p95, maxUsed := tickStats(all)
		if n < 3 || p95 <= 0 || maxUsed <= 0 || maxUsed >= 1 {
			t.Errorf("ticks=%d p95=%vms max budget used=%v", n, p95, maxUsed)
		}
	})
	t.Run("view_rebuilds", func(t *testing.T) {
		got := viewRebuilds(all)
		if len(got) != 1 || got["start"].rebuilds != 1 || got["start"].operations != 1 {
			t.Errorf("view rebuilds by reason = %+v, want the first tick's, holding the one operation", got)
		}
	})
	t.Run("cs_errors", func(t *testing.T) {
		calls, errs := csCalls(all)
		if calls == 0 || errs != 2 {
			t.Errorf("cs calls=%d errors=%d, want two errors (the injected 503s)", calls, errs)
		}
	})
}

// ---- the queries of docs/functions.md, in Go

type rebuilds struct {
	rebuilds   int
	operations float64
}

// viewRebuilds is query "view_rebuilds" (without the hourly bins): full
// reads of the active set by reason, and the most operations one held.
func viewRebuilds(recs []map[string]any) map[string]rebuilds {
	out := map[string]rebuilds{}
	for _, r := range recs {
		if !msgIn(r, "poll.view_rebuilt") {
			continue
		}
		b := out[str(r, "reason")]
		b.rebuilds++
		b.operations = max(b.operations, num(r, "operations"))
		out[str(r, "reason")] = b
	}
	return out
}

func msgIn(rec map[string]any, names ...string) bool { return slices.Contains(names, str(rec, "msg")) }

func str(rec map[string]any, k string) string { s, _ := rec[k].(string); return s }
func num(rec map[string]any, k string) float64 {
	n, _ := rec[k].(float64)
	return n
}
func at(rec map[string]any) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, str(rec, "time"))
	return t
}
func latest(recs []map[string]any) time.Time {
	var l time.Time
	for _, r := range recs {
		if t := at(r); t.After(l) {
			l = t
		}
	}
	return l
}

type stuckOp struct {
	operationID, state, lastProblem string
	since, started                  time.Time
}

// stuck is query "stuck": the latest dispatched/transition record per
// operation, non-terminal and older than n at now, with the last
// Warn/Error line about it.
func stuck(recs []map[string]any, now time.Time, n time.Duration) []stuckOp {
	last := map[string]stuckOp{}
	problem := map[string]string{}
	for _, r := range recs {
		id := str(r, "operation_id")
		if id != "" && (str(r, "level") == "WARN" || str(r, "level") == "ERROR") {
			problem[id] = str(r, "msg") + ": " + str(r, "error")
		}
		if !msgIn(r, "operation.dispatched", "operation.transition") {
			continue
		}
		state := str(r, "status")
		if str(r, "msg") == "operation.transition" {
			state = str(r, "to")
		}
		if prev, ok := last[id]; !ok || !at(r).Before(prev.since) {
			last[id] = stuckOp{operationID: id, state: state, since: at(r),
				started: at(r).Add(-time.Duration(num(r, "seconds_since_start") * float64(time.Second)))}
		}
	}
	var out []stuckOp
	for id, op := range last {
		if slices.Contains([]string{"Succeeded", "Failed", "Canceled"}, op.state) || !op.since.Before(now.Add(-n)) {
			continue
		}
		op.lastProblem = problem[id]
		out = append(out, op)
	}
	return out
}

type problem struct {
	count     int
	what, err string
	whats     []string // every problem's msg, oldest first
}

// problems is query "problems": Warn/Error lines per operation, with the
// latest one's message and error.
func problems(recs []map[string]any) map[string]problem {
	out := map[string]problem{}
	for _, r := range recs {
		id := str(r, "operation_id")
		if id == "" || (str(r, "level") != "WARN" && str(r, "level") != "ERROR") {
			continue
		}
		p := out[id]
		p.count++
		p.what, p.err = str(r, "msg"), str(r, "error")
		p.whats = append(p.whats, p.what)
		out[id] = p
	}
	return out
}

// givenUp is query "given_up": the document ids of each batch given up.
func givenUp(recs []map[string]any) [][]string {
	var out [][]string
	for _, r := range recs {
		if !msgIn(r, "changefeed.batch_given_up") {
			continue
		}
		var ids []string
		for _, id := range r["document_ids"].([]any) {
			ids = append(ids, id.(string))
		}
		out = append(out, ids)
	}
	return out
}

func transitionsByOutcome(recs []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if msgIn(r, "operation.transition") {
			out[str(r, "to")]++
		}
	}
	return out
}

func notificationFailures(recs []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if msgIn(r, "notification.attempt") && str(r, "outcome") != "delivered" {
			out[str(r, "host")]++
		}
	}
	return out
}

// tickStats is query "ticks": count, p95 of wall_ms (nearest rank) and the
// largest budget_used.
func tickStats(recs []map[string]any) (n int, p95, maxUsed float64) {
	var walls []float64
	for _, r := range recs {
		if msgIn(r, "poll.tick") {
			walls = append(walls, num(r, "wall_ms"))
			maxUsed = max(maxUsed, num(r, "budget_used"))
		}
	}
	if len(walls) == 0 {
		return 0, 0, 0
	}
	sort.Float64s(walls)
	return len(walls), walls[(95*len(walls)+99)/100-1], maxUsed
}

func csCalls(recs []map[string]any) (calls, errs int) {
	for _, r := range recs {
		if msgIn(r, "poll.tick", "dispatch.batch") {
			calls += int(num(r, "cs_calls"))
			errs += int(num(r, "cs_errors"))
		}
	}
	return calls, errs
}

// ---- the shapes and the docs

// shape is a record's keys with their JSON kinds; "time" and values are
// left out, so the golden file holds the contract, not one run.
func shape(rec map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range rec {
		if k == "time" {
			continue
		}
		switch v.(type) {
		case string:
			out[k] = "string"
		case float64:
			out[k] = "number"
		case bool:
			out[k] = "bool"
		case []any:
			out[k] = "array"
		default:
			out[k] = fmt.Sprintf("%T", v)
		}
	}
	return out
}

func goldenShapes(t *testing.T, recs []map[string]any) {
	got := map[string]map[string]string{}
	for _, r := range recs {
		name := str(r, "msg")
		if !slices.Contains(telemetryNames, name) {
			continue
		}
		s := shape(r)
		if name == "poll.tick" || name == "dispatch.batch" {
			delete(s, "error") // the server adds it to a failed invocation's line
		}
		if prev, ok := got[name]; ok && fmt.Sprint(prev) != fmt.Sprint(s) {
			t.Errorf("%s records differ in shape:\n%v\n%v", name, prev, s)
		}
		got[name] = s
	}
	for _, name := range telemetryNames {
		if got[name] == nil {
			t.Errorf("the scenario wrote no %s record", name)
		}
	}
	path := filepath.Join("testdata", "telemetry.golden")
	body, _ := json.MarshalIndent(got, "", "  ")
	body = append(body, '\n')
	if *update {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./app -run TestTelemetry -update writes it)", err)
	}
	if string(want) != string(body) {
		t.Errorf("telemetry shapes changed; dashboards and alerts read these names.\nwant:\n%s\ngot:\n%s", want, body)
	}
}

// docsQueriesMatch reads the KQL blocks of docs/functions.md: each named
// query has a Go evaluation above, and every message name and r.<key> it
// uses exists in the records the code wrote.
func docsQueriesMatch(t *testing.T, recs []map[string]any) {
	doc, err := os.ReadFile("../docs/functions.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```kusto\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	var named []string
	keys := map[string]map[string]bool{} // msg -> keys seen
	all := map[string]bool{}
	for _, r := range recs {
		m := str(r, "msg")
		if keys[m] == nil {
			keys[m] = map[string]bool{}
		}
		for k := range r {
			keys[m][k] = true
			all[k] = true
		}
	}
	for _, b := range blocks {
		q := b[1]
		name := ""
		if m := regexp.MustCompile(`^// query: (\w+)`).FindStringSubmatch(q); m != nil {
			name = m[1]
			named = append(named, name)
		}
		var msgs []string
		for _, m := range regexp.MustCompile(`"([a-z]+\.[a-z_]+)"`).FindAllStringSubmatch(q, -1) {
			msgs = append(msgs, m[1])
		}
		for _, m := range msgs {
			if keys[m] == nil {
				t.Errorf("query %q names message %q, which the code never wrote", name, m)
			}
		}
		for _, m := range regexp.MustCompile(`\br\.([a-z_0-9]+)`).FindAllStringSubmatch(q, -1) {
			k := m[1]
			found := all[k] && len(msgs) == 0
			for _, msg := range msgs {
				found = found || keys[msg][k]
			}
			// Keys read from Warn/Error lines about an operation (stuck's join).
			found = found || (k == "level" || k == "error") && all[k]
			if !found {
				t.Errorf("query %q reads r.%s, which no %v record carries", name, k, msgs)
			}
		}
	}
	want := []string{"cs_errors", "given_up", "notification_failures", "problems", "stuck", "ticks", "transitions", "view_rebuilds"}
	slices.Sort(named)
	if !slices.Equal(named, want) {
		t.Errorf("docs/functions.md has queries %v; the Go evaluations here are %v", named, want)
	}
}
