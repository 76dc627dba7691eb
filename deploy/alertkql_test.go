package deploy_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/kql"
)

// The alert tests evaluate each rule with a Go evaluator over real
// records (Application Insights cannot run here). So that they test the
// shipped queries and not Go copies of them:
//   - each evaluator takes its events, windows and comparisons with the
//     template's parameters from the shipped .kql itself
//     (kql.Parse): a window, an event name or a >= changed in
//     the file changes what the test evaluates, and the fire-and-quiet
//     cases judge the change;
//   - what the text uses beyond those (the record's fields, string and
//     number literals) is listed below, as what the evaluator models of it;
//     TestAlertEvaluatorsModelTheShippedKQL fails when the file and the
//     list differ, so a query's logic cannot change without its evaluator
//     being looked at;
//   - thresholds are the template's defaults (templateAlert.param), as
//     before.

// shipped is one shipped query's constants, read for its Go evaluator.
type shipped struct {
	kql.Query
	t    testing.TB
	file string
}

// shippedPath is where a rule's query is shipped, by its file's base name.
func shippedPath(file string) string {
	if file == "provisioning_burn" {
		return filepath.Join("..", "deploy", "slo", file+".kql")
	}
	return filepath.Join("..", "deploy", "alerts", file+".kql")
}

// shippedParams are the names the template defines before each query.
var shippedParams = map[string][]string{
	"stuck":             {"stuck_kind", "stuck_request", "stuck_after"},
	"tick":              {"budget_used_threshold"},
	"notifications":     {"max_attempts"},
	"cs_errors":         {"error_rate_threshold", "min_calls"},
	"cs_latency":        {"p99_ms_threshold"},
	"restarts":          {"max_starts"},
	"provisioning_burn": {"slo_target", "burn_rate", "long_window", "short_window"},
	"given_up":          nil,
	"cs_anomaly":        nil,
}

// shippedQuery reads file's shipped query.
func shippedQuery(t testing.TB, file string) shipped {
	t.Helper()
	b, err := os.ReadFile(shippedPath(file))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kql.Parse(string(b), shippedParams[file])
	if err != nil {
		t.Fatalf("%s: %v", shippedPath(file), err)
	}
	return shipped{Query: k, t: t, file: file}
}

// event is the query's i-th record name.
func (q shipped) event(i int) string {
	q.t.Helper()
	if i >= len(q.Events) {
		q.t.Fatalf("%s.kql names %d events (%v); its evaluator reads event %d", q.file, len(q.Events), q.Events, i+1)
	}
	return q.Events[i]
}

// window is the query's i-th ago() window.
func (q shipped) window(i int) time.Duration {
	q.t.Helper()
	d, err := q.Window(i)
	if err != nil {
		q.t.Fatalf("%s.kql: %v", q.file, err)
	}
	return d
}

// cmp is the query's comparison of left with its parameter right.
func (q shipped) cmp(left, right string, a, b float64) bool {
	q.t.Helper()
	ok, err := q.Compare(left, right, a, b)
	if err != nil {
		q.t.Fatalf("%s.kql: %v", q.file, err)
	}
	return ok
}

// modelled is, for each shipped query, everything kql.Parse finds in it as
// its evaluator models it: the record fields it filters on or only
// projects (the alert's dimensions, which the evaluator need not compute),
// the literals and the comparisons. A change to a .kql that this does not
// list fails TestAlertEvaluatorsModelTheShippedKQL until its evaluator is
// brought along and the line here changed with it.
var modelled = map[string]kql.Query{
	"stuck": {Events: []string{"operation.transition", "operation.stuck"}, Windows: []string{"2d"},
		// filtered: kind, request, resource_id, seconds_since_start, to; shown: status, cluster_service_id
		Fields:   []string{"cluster_service_id", "kind", "request", "resource_id", "seconds_since_start", "status", "to"},
		Literals: []string{"", "Failed", "Succeeded"}, Numbers: []string{"1m", "1s"},
		Compares: map[string]string{"age stuck_after": ">=", "op_kind stuck_kind": "==", "op_request stuck_request": "=="}},
	"tick": {Events: []string{"poll.tick"}, Windows: []string{"15m"},
		Fields:   []string{"budget_used", "error", "invocation_id", "outcome", "wall_ms"},
		Literals: []string{"", "budget_exhausted", "failed", "missing", "no poll.tick record in 15 minutes", "ok", "over_budget"},
		Numbers:  []string{"0"}, Compares: map[string]string{"budget_used budget_used_threshold": ">="}},
	"given_up": {Events: []string{"changefeed.batch_given_up"}, Windows: []string{"15m"},
		Fields: []string{"document_ids", "documents", "error", "invocation_id", "retry_count"}, Compares: map[string]string{}},
	"cs_anomaly": {Events: []string{"cs.anomaly"}, Windows: []string{"15m"},
		Fields: []string{"absent", "deletes_held", "invocation_id", "must_exist_absent", "parents_absent", "polled", "sample_ids", "verdict"},
		// verdict == "wave" is the filter
		Literals: []string{"wave"}, Compares: map[string]string{}},
	"notifications": {Events: []string{"notification.attempt"}, Windows: []string{"1h"},
		Fields:   []string{"attempt", "error", "host", "next_retry", "outcome", "resource_id"},
		Literals: []string{"delivered", "failed", "refused"}, Compares: map[string]string{"attempt max_attempts": ">"}},
	"cs_errors": {Events: []string{"poll.tick", "dispatch.batch"}, Windows: []string{"1h", "5m"},
		Fields: []string{"cs_calls", "cs_errors"}, Numbers: []string{"0", "0.0"}, // no calls: a rate of 0
		Compares: map[string]string{"calls_5m min_calls": ">=", "error_rate_5m error_rate_threshold": ">", "error_rate_1h error_rate_threshold": ">"}},
	"cs_latency": {Events: []string{"poll.tick", "dispatch.batch"}, Windows: []string{"15m"},
		// 0: only invocations that called CS; 2: more than half slow; 50: the median, shown only
		Fields: []string{"cs_calls", "cs_p99_ms"}, Numbers: []string{"0", "2", "50"},
		Compares: map[string]string{"p99_ms p99_ms_threshold": ">"}},
	"restarts": {Events: []string{"handler.started"}, Windows: []string{"1h"}, Compares: map[string]string{"starts max_starts": ">"}},
	"provisioning_burn": {Events: []string{"operation.transition"}, Windows: []string{"long_window", "short_window"},
		Fields: []string{"kind", "request", "to"}, Literals: []string{"Create", "Failed", "Succeeded", "cluster"},
		Numbers:  []string{"0", "0.0", "1.0"}, // the error budget is 1.0 - target; no creates: a burn of 0
		Compares: map[string]string{"long_burn burn_rate": ">=", "short_burn burn_rate": ">="}},
}

// TestAlertEvaluatorsModelTheShippedKQL: every shipped query is one an
// evaluator models, and what it models is what the file says now; every
// query starts with the prelude docs/functions.md tells the reader to paste.
func TestAlertEvaluatorsModelTheShippedKQL(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "deploy", "*", "*.kql"))
	if err != nil {
		t.Fatal(err)
	}
	prelude := strings.TrimSpace(kustoBlocks(t, "../docs/functions.md")[0])
	seen := map[string]bool{}
	for _, f := range files {
		file := strings.TrimSuffix(filepath.Base(f), ".kql")
		seen[file] = true
		want, ok := modelled[file]
		if !ok || shippedPath(file) != f {
			t.Errorf("%s: no evaluator models it (or it is not where shippedPath looks)", f)
			continue
		}
		got := shippedQuery(t, file).Query
		if got.Prelude != prelude {
			t.Errorf("%s's prelude differs from docs/functions.md's:\n%s", f, got.Prelude)
		}
		for _, c := range []struct {
			what      string
			got, want []string
		}{
			{"events", got.Events, want.Events}, {"ago() windows", got.Windows, want.Windows},
			{"record fields", got.Fields, want.Fields}, {"string literals", got.Literals, want.Literals},
			{"numbers", got.Numbers, want.Numbers},
		} {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("%s: %s %q; its evaluator models %q", f, c.what, c.got, c.want)
			}
		}
		if !maps.Equal(got.Compares, want.Compares) {
			t.Errorf("%s: comparisons with parameters %v; its evaluator models %v", f, got.Compares, want.Compares)
		}
	}
	for file := range modelled {
		if !seen[file] {
			t.Errorf("an evaluator models %s.kql, which deploy/ does not ship", file)
		}
	}
}

// TestParseKQLReadsAChange: the parse sees the edits an evaluator must
// follow (a control: were it blind, the test above could not fail).
func TestParseKQLReadsAChange(t *testing.T) {
	b, err := os.ReadFile(shippedPath("tick"))
	if err != nil {
		t.Fatal(err)
	}
	orig := string(b)
	for _, tc := range []struct{ old, new, want string }{
		{"ago(15m)", "ago(20m)", "windows [20m]"},
		{`msg == "poll.tick"`, `msg == "poll.ticked"`, "events [poll.ticked]"},
		{"budget_used >= budget_used_threshold", "budget_used > budget_used_threshold", "compares map[budget_used budget_used_threshold:>]"},
		{"r.wall_ms", "r.wall_us", "wall_us"},
		{`"over_budget"`, `"over"`, "over]"},
	} {
		if !strings.Contains(orig, tc.old) {
			t.Fatalf("tick.kql lacks %q", tc.old)
		}
		k, err := kql.Parse(strings.Replace(orig, tc.old, tc.new, 1), shippedParams["tick"])
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("events %v windows %v fields %v literals %v compares %v", k.Events, k.Windows, k.Fields, k.Literals, k.Compares)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s -> %s: parsed %s; want %s in it", tc.old, tc.new, got, tc.want)
		}
	}
}
