package deploy_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/apptest"
)

// workbookPanel is one query panel of deploy/workbook.json.
type workbookPanel struct {
	name, title, visualization, query string
}

func workbookPanels(t *testing.T) []workbookPanel {
	t.Helper()
	var wb struct {
		Version string `json:"version"`
		Items   []struct {
			Type    int    `json:"type"`
			Name    string `json:"name"`
			Content struct {
				Query                    string `json:"query"`
				Title                    string `json:"title"`
				Visualization            string `json:"visualization"`
				ResourceType             string `json:"resourceType"`
				TimeContextFromParameter string `json:"timeContextFromParameter"`
			} `json:"content"`
		} `json:"items"`
		FallbackResourceIDs []string `json:"fallbackResourceIds"`
	}
	if err := json.Unmarshal([]byte(readDeploy(t, "workbook.json")), &wb); err != nil {
		t.Fatalf("deploy/workbook.json: %v", err)
	}
	if wb.Version != "Notebook/1.0" || !slices.Equal(wb.FallbackResourceIDs, []string{"__APP_INSIGHTS_ID__"}) {
		t.Errorf("workbook.json: version %q, fallbackResourceIds %v; want Notebook/1.0 and the placeholder the template replaces",
			wb.Version, wb.FallbackResourceIDs)
	}
	var out []workbookPanel
	for _, it := range wb.Items {
		if it.Type != 3 {
			continue
		}
		c := it.Content
		if c.ResourceType != "microsoft.insights/components" || c.TimeContextFromParameter != "TimeRange" || c.Title == "" {
			t.Errorf("workbook panel %s: resourceType %q, time context %q, title %q", it.Name, c.ResourceType, c.TimeContextFromParameter, c.Title)
		}
		if !strings.HasPrefix(c.Query, "// workbook: "+it.Name+"\nlet hcpops = traces") {
			t.Errorf("workbook panel %s does not start with its name and the prelude", it.Name)
		}
		out = append(out, workbookPanel{it.Name, c.Title, c.Visualization, c.Query})
	}
	return out
}

// ---- the panels, in Go

type activeGroupRow struct {
	kind, request, status string
	count, stuck          int
	oldestSeconds         float64
	oldestOperationID     string
	oldestResourceID      string
}

func groupsOf(r map[string]any) []activeGroupRow {
	var out []activeGroupRow
	gs, _ := r["groups"].([]any)
	for _, g := range gs {
		m, _ := g.(map[string]any)
		out = append(out, activeGroupRow{apptest.Str(m, "kind"), apptest.Str(m, "request"), apptest.Str(m, "status"), int(apptest.Num(m, "count")),
			int(apptest.Num(m, "stuck")), apptest.Num(m, "oldest_seconds"), apptest.Str(m, "oldest_operation_id"), apptest.Str(m, "oldest_resource_id")})
	}
	return out
}

// activeByStatus is panel active_by_status: per 5-minute bin and status,
// the largest total a tick saw.
func activeByStatus(recs []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if !apptest.MsgIn(r, "poll.active") {
			continue
		}
		tick := map[string]int{}
		for _, g := range groupsOf(r) {
			tick[g.status] += g.count
		}
		bin := apptest.At(r).Truncate(5 * time.Minute).Format(time.RFC3339)
		for st, n := range tick {
			out[bin+" "+st] = max(out[bin+" "+st], n)
		}
	}
	return out
}

// durations is panel durations: count and p50 of the minutes from start
// to a terminal state, per kind, request and outcome (nearest rank).
func durations(recs []map[string]any) map[string][2]float64 {
	mins := map[string][]float64{}
	for _, r := range recs {
		if apptest.MsgIn(r, "operation.transition") && terminal(apptest.Str(r, "to")) {
			k := apptest.Str(r, "kind") + " " + apptest.Str(r, "request") + " " + apptest.Str(r, "to")
			mins[k] = append(mins[k], apptest.Num(r, "seconds_since_start")/60)
		}
	}
	out := map[string][2]float64{}
	for k, v := range mins {
		sort.Float64s(v)
		out[k] = [2]float64{float64(len(v)), v[(50*len(v)+99)/100-1]}
	}
	return out
}

// csCallsOverTime is panel cs_calls summed over every bin: calls, errors
// and the worst p99.
func csCallsOverTime(recs []map[string]any) (calls, errs, worstP99 float64) {
	for _, r := range recs {
		if apptest.MsgIn(r, "poll.tick", "dispatch.batch") {
			calls += apptest.Num(r, "cs_calls")
			errs += apptest.Num(r, "cs_errors")
			worstP99 = max(worstP99, apptest.Num(r, "cs_p99_ms"))
		}
	}
	return calls, errs, worstP99
}

// tickBudget is panel tick_budget over every bin: the largest budget use
// and the ticks stopped by the budget.
func tickBudget(recs []map[string]any) (maxUsed float64, exhausted int) {
	for _, r := range recs {
		if apptest.MsgIn(r, "poll.tick") {
			maxUsed = max(maxUsed, apptest.Num(r, "budget_used"))
			if apptest.Str(r, "outcome") == "budget_exhausted" {
				exhausted++
			}
		}
	}
	return maxUsed, exhausted
}

// notificationOutcomes is panel notification_outcomes over every bin.
func notificationOutcomes(recs []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if apptest.MsgIn(r, "notification.attempt") {
			out[apptest.Str(r, "outcome")]++
		}
	}
	return out
}

// oldestActive is panel oldest_active: the groups of the latest poll.active.
func oldestActive(recs []map[string]any) []activeGroupRow {
	var last map[string]any
	for _, r := range recs {
		if apptest.MsgIn(r, "poll.active") && (last == nil || !apptest.At(r).Before(apptest.At(last))) {
			last = r
		}
	}
	rows := groupsOf(last)
	slices.SortFunc(rows, func(a, b activeGroupRow) int { return int(b.oldestSeconds - a.oldestSeconds) })
	return rows
}

// stuckNow is panel stuck_now: the stuck alert with no threshold, kind or
// request, over the whole time range.
func stuckNow(t *testing.T, recs []map[string]any) []alerted {
	return stuckAlert(shippedQuery(t, "stuck"), recs, apptest.Latest(recs).Add(time.Second), "", "", 0)
}

// TestWorkbook evaluates each panel over the runs and checks the template
// deploys the file.
func TestWorkbook(t *testing.T) {
	panels := workbookPanels(t)
	var names []string
	for _, p := range panels {
		names = append(names, p.name)
	}
	want := []string{"active_by_status", "cs_calls", "durations", "notification_outcomes", "oldest_active", "stuck_now", "tick_budget"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("workbook panels %v; the Go evaluations here are %v", names, want)
	}
	mon := readDeploy(t, "monitoring.bicep")
	for _, s := range []string{"resource workbook 'Microsoft.Insights/workbooks@", "sourceId: insightsId", "category: 'workbook'",
		"serializedData: replace(loadTextContent('workbook.json'), '__APP_INSIGHTS_ID__', insightsId)"} {
		if !strings.Contains(mon, s) {
			t.Errorf("monitoring.bicep lacks %q", s)
		}
	}
	// Every g.<key> a panel reads from poll.active's groups exists.
	rs := runs.Get(t)
	keys := map[string]bool{}
	for _, r := range rs.Stuck.All {
		if apptest.MsgIn(r, "poll.active") {
			for _, g := range r["groups"].([]any) {
				for k := range g.(map[string]any) {
					keys[k] = true
				}
			}
		}
	}
	for _, p := range panels {
		for _, m := range regexp.MustCompile(`\bg(?:\.([a-z_]+)|\["([a-z_]+)"\])`).FindAllStringSubmatch(p.query, -1) {
			if k := m[1] + m[2]; !keys[k] {
				t.Errorf("panel %s reads g.%s, which no poll.active group carries (%v)", p.name, k, keys)
			}
		}
	}

	t.Run("active_by_status", func(t *testing.T) {
		got := activeByStatus(rs.Stuck.All)
		provisioning := 0
		for k, n := range got {
			if strings.HasSuffix(k, " Provisioning") {
				provisioning = max(provisioning, n)
			}
		}
		if provisioning != 1 {
			t.Errorf("active by status in the stuck run = %v, want the operation counted Provisioning", got)
		}
	})
	t.Run("durations", func(t *testing.T) {
		got := durations(rs.Stuck.All)
		d := got["cluster Create Succeeded"]
		if len(got) != 1 || d[0] != 1 || d[1] < 25 || d[1] > 40 {
			t.Errorf("durations of the stuck run = %v, want one cluster create of about 25 minutes", got)
		}
	})
	t.Run("cs_calls", func(t *testing.T) {
		calls, errs, p99 := csCallsOverTime(rs.CSErrors.All)
		if calls == 0 || errs < 15 || p99 <= 0 {
			t.Errorf("cs calls of the failing run: calls %v errors %v worst p99 %v", calls, errs, p99)
		}
		if _, errs, p99 := csCallsOverTime(rs.CSSlow.All); errs != 0 || p99 < 40 {
			t.Errorf("cs calls of the slow run: errors %v, worst p99 %v ms; want none and at least 40", errs, p99)
		}
	})
	t.Run("tick_budget", func(t *testing.T) {
		if used, exhausted := tickBudget(rs.Budget.All); exhausted == 0 || used < 1 {
			t.Errorf("tick budget of the 1 ms run: max used %v, exhausted %d", used, exhausted)
		}
		if used, exhausted := tickBudget(rs.Clean.All); exhausted != 0 || used <= 0 || used >= 0.5 {
			t.Errorf("tick budget of the clean run: max used %v, exhausted %d", used, exhausted)
		}
	})
	t.Run("notification_outcomes", func(t *testing.T) {
		if got := notificationOutcomes(rs.Notify.All); got["failed"] != 7 || got["delivered"] != 1 || len(got) != 2 {
			t.Errorf("notification outcomes of the notify run = %v, want 7 failed and 1 delivered", got)
		}
	})
	t.Run("oldest_active", func(t *testing.T) {
		got := oldestActive(rs.Stuck.Mid)
		if len(got) != 1 || got[0].oldestOperationID != rs.Stuck.OpID || got[0].oldestResourceID != apptest.ClusterID ||
			got[0].oldestSeconds < 25*60 || got[0].stuck != 1 || got[0].count != 1 {
			t.Errorf("oldest active in the stuck run = %+v, want the cluster create, 25 minutes old and stuck", got)
		}
		if got := oldestActive(rs.Stuck.All); len(got) != 0 {
			t.Errorf("oldest active once it succeeded = %+v, want none", got)
		}
	})
	t.Run("stuck_now", func(t *testing.T) {
		if got := stuckNow(t, rs.Stuck.Mid); len(got) != 1 || got[0].resourceID != apptest.ClusterID {
			t.Errorf("stuck now in the stuck run = %+v, want %s", got, apptest.ClusterID)
		}
		if got := stuckNow(t, rs.Stuck.All); len(got) != 0 {
			t.Errorf("stuck now once it succeeded = %+v", got)
		}
	})
}
