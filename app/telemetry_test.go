package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/apptest"
)

// telemetryNames are the records docs/functions.md documents.
var telemetryNames = []string{"poll.tick", "dispatch.batch", "operation.dispatched", "operation.transition",
	"notification.attempt", "changefeed.batch_given_up", "poll.active", "operation.stuck",
	"poll.view_rebuilt", "cs.anomaly"}

// writtenElsewhere are documented records no app run writes, with the
// test that holds them.
var writtenElsewhere = map[string]string{"handler.started": "TestServeLogStreams (serve_test.go) runs the binary",
	"settings.recorded":            "TestOpsJudgesWithTheAppsSettings (cmd/hcpopsctl) runs the binary on Cosmos DB",
	"settings.not_recorded":        "TestSettingsNotRecordedIsLogged (settingsrecord_test.go)",
	"operation.abandoned":          "TestOpsFailBesideDev (opsabandon_test.go) runs hcpopsctl ops fail; TestAbandonEndsAnActiveOperation (core/lifecycle)",
	"changefeed.documents_skipped": "TestOversizeBatchIsDecoded (functions/dispatchOperations) posts a batch over 16 MiB"}

// runs are apptest's runs, made once for the test binary.
var runs apptest.Shared

// TestTelemetry holds the shapes of the records (golden) and evaluates
// each documented query's filter over them.
func TestTelemetry(t *testing.T) {
	rs := runs.Get(t)
	all, mid := rs.Troubled.All, rs.Troubled.Mid
	// The shapes and names hold over every run: some records (a stuck
	// operation's) are written only by some.
	every := slices.Concat(all, rs.Clean.All, rs.Stuck.All, rs.Notify.All, rs.CSErrors.All, rs.CSSlow.All, rs.Budget.All,
		rs.Misrouted.All)
	var shapes map[string]map[string]string
	t.Run("golden shapes", func(t *testing.T) { shapes = goldenShapes(t, every) })
	t.Run("records documented", func(t *testing.T) { docsRecordsTable(t, shapes) })
	t.Run("queries match the docs", func(t *testing.T) { docsQueriesMatch(t, every) })

	opID := rs.Troubled.OpID
	t.Run("stuck", func(t *testing.T) {
		at := apptest.Latest(mid).Add(31 * time.Minute)
		got := stuck(mid, at, 30*time.Minute)
		if len(got) != 1 || got[0].operationID != opID || got[0].state != "Provisioning" || got[0].started.IsZero() {
			t.Fatalf("stuck at %v = %+v, want the operation in Provisioning", at, got)
		}
		if got[0].lastProblem == "" {
			t.Errorf("stuck operation has no last problem; the CS 503 was logged about it")
		}
		if got := stuck(all, apptest.Latest(all).Add(31*time.Minute), 30*time.Minute); len(got) != 0 {
			t.Errorf("after it succeeded, stuck = %+v", got)
		}
		if got := stuck(mid, apptest.Latest(mid).Add(time.Minute), 30*time.Minute); len(got) != 0 {
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
		if len(got) != 1 || len(got[0]) != 1 || got[0][0] != rs.Troubled.DocID {
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
		got := notificationFailures(all)
		if got[rs.Troubled.SinkHost] != 1 || len(got) != 1 {
			t.Errorf("failures by host = %v, want 1 for %s", got, rs.Troubled.SinkHost)
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
	t.Run("cs_anomalies", func(t *testing.T) {
		got := csAnomalies(rs.Misrouted.All)
		if len(got) != 1 || got["wave"].ticks != 1 || got["wave"].mustExistAbsent != 1 || got["wave"].sample == "" {
			t.Errorf("cs anomalies of the misrouted run = %+v, want one wave naming the accepted cluster", got)
		}
		if got := csAnomalies(rs.Clean.All); len(got) != 0 {
			t.Errorf("cs anomalies of the clean run = %+v, want none", got)
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
		if !apptest.MsgIn(r, "poll.view_rebuilt") {
			continue
		}
		b := out[apptest.Str(r, "reason")]
		b.rebuilds++
		b.operations = max(b.operations, apptest.Num(r, "operations"))
		out[apptest.Str(r, "reason")] = b
	}
	return out
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
		id := apptest.Str(r, "operation_id")
		if id != "" && (apptest.Str(r, "level") == "WARN" || apptest.Str(r, "level") == "ERROR") && !apptest.MsgIn(r, "operation.stuck") {
			problem[id] = apptest.Str(r, "msg") + ": " + apptest.Str(r, "error")
		}
		if !apptest.MsgIn(r, "operation.dispatched", "operation.transition") {
			continue
		}
		state := apptest.Str(r, "status")
		if apptest.Str(r, "msg") == "operation.transition" {
			state = apptest.Str(r, "to")
		}
		if prev, ok := last[id]; !ok || !apptest.At(r).Before(prev.since) {
			last[id] = stuckOp{operationID: id, state: state, since: apptest.At(r),
				started: apptest.At(r).Add(-time.Duration(apptest.Num(r, "seconds_since_start") * float64(time.Second)))}
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
		id := apptest.Str(r, "operation_id")
		if id == "" || (apptest.Str(r, "level") != "WARN" && apptest.Str(r, "level") != "ERROR") {
			continue
		}
		p := out[id]
		p.count++
		p.what, p.err = apptest.Str(r, "msg"), apptest.Str(r, "error")
		p.whats = append(p.whats, p.what)
		out[id] = p
	}
	return out
}

// givenUp is query "given_up": the document ids of each batch given up.
func givenUp(recs []map[string]any) [][]string {
	var out [][]string
	for _, r := range recs {
		if !apptest.MsgIn(r, "changefeed.batch_given_up") {
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
		if apptest.MsgIn(r, "operation.transition") {
			out[apptest.Str(r, "to")]++
		}
	}
	return out
}

func notificationFailures(recs []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if apptest.MsgIn(r, "notification.attempt") && apptest.Str(r, "outcome") != "delivered" {
			out[apptest.Str(r, "host")]++
		}
	}
	return out
}

// tickStats is query "ticks": count, p95 of wall_ms (nearest rank) and the
// largest budget_used.
func tickStats(recs []map[string]any) (n int, p95, maxUsed float64) {
	var walls []float64
	for _, r := range recs {
		if apptest.MsgIn(r, "poll.tick") {
			walls = append(walls, apptest.Num(r, "wall_ms"))
			maxUsed = max(maxUsed, apptest.Num(r, "budget_used"))
		}
	}
	if len(walls) == 0 {
		return 0, 0, 0
	}
	sort.Float64s(walls)
	return len(walls), walls[(95*len(walls)+99)/100-1], maxUsed
}

type anomalies struct {
	ticks, deletesHeld, mustExistAbsent int
	sample                              string
}

// csAnomalies is query "cs_anomalies" (without the hourly bins): the
// cs.anomaly records by verdict.
func csAnomalies(recs []map[string]any) map[string]anomalies {
	out := map[string]anomalies{}
	for _, r := range recs {
		if !apptest.MsgIn(r, "cs.anomaly") {
			continue
		}
		a := out[apptest.Str(r, "verdict")]
		a.ticks++
		a.deletesHeld += int(apptest.Num(r, "deletes_held"))
		a.mustExistAbsent = max(a.mustExistAbsent, int(apptest.Num(r, "must_exist_absent")))
		if ids, _ := r["sample_ids"].([]any); len(ids) > 0 && a.sample == "" {
			a.sample = fmt.Sprint(ids...)
		}
		out[apptest.Str(r, "verdict")] = a
	}
	return out
}

func csCalls(recs []map[string]any) (calls, errs int) {
	for _, r := range recs {
		if apptest.MsgIn(r, "poll.tick", "dispatch.batch") {
			calls += int(apptest.Num(r, "cs_calls"))
			errs += int(apptest.Num(r, "cs_errors"))
		}
	}
	return calls, errs
}

// ---- the shapes and the docs

// shape is a record's keys with their JSON kinds; "time" and values are
// left out, so the golden file holds the contract, not one run. The
// objects of an array (poll.active's groups) add their keys as
// "key[].inner".
func shape(rec map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range rec {
		if k == "time" {
			continue
		}
		out[k] = kindOf(v)
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if obj, ok := e.(map[string]any); ok {
					for ik, iv := range obj {
						out[k+"[]."+ik] = kindOf(iv)
					}
				}
			}
		}
	}
	return out
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// topLevel drops the keys of array elements: an empty array has none.
func topLevel(s map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range s {
		if !strings.Contains(k, "[].") {
			out[k] = v
		}
	}
	return out
}

func goldenShapes(t *testing.T, recs []map[string]any) map[string]map[string]string {
	got := map[string]map[string]string{}
	for _, r := range recs {
		name := apptest.Str(r, "msg")
		if !slices.Contains(telemetryNames, name) {
			continue
		}
		s := shape(r)
		if name == "poll.tick" || name == "dispatch.batch" {
			delete(s, "error") // the server adds it to a failed invocation's line
		}
		if prev, ok := got[name]; ok {
			if fmt.Sprint(topLevel(prev)) != fmt.Sprint(topLevel(s)) {
				t.Errorf("%s records differ in shape:\n%v\n%v", name, prev, s)
			}
			for k, v := range prev {
				if s[k] != "" && s[k] != v {
					t.Errorf("%s records differ in the kind of %s: %s and %s", name, k, v, s[k])
				}
				s[k] = v
			}
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
	return got
}
