package lifecycle

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

func TestCrossed(t *testing.T) {
	m, h, d := time.Minute, time.Hour, 24*time.Hour
	tests := []struct {
		own, any, age, want time.Duration
	}{
		{20 * m, h, 19 * m, 0},
		{20 * m, h, 20 * m, 20 * m},
		{20 * m, h, 59 * m, 20 * m},
		{20 * m, h, h, h},
		{20 * m, h, 119 * m, h},
		{20 * m, h, 2 * h, 2 * h},
		{20 * m, h, 17 * h, 16 * h},
		{20 * m, h, d, d}, // the doubling stops at a day ...
		{20 * m, h, 47 * h, d},
		{20 * m, h, 49 * h, 2 * d}, // ... and then it is one a day
		{20 * m, h, 9*d + h, 9 * d},
		{90 * m, h, 80 * m, h}, // an own threshold above the backstop's
		{90 * m, h, 100 * m, 90 * m},
		{0, h, 30 * m, 0}, // a pair with no threshold of its own
		{0, h, 70 * m, h},
	}
	for _, tc := range tests {
		if got := crossed(tc.own, tc.any, tc.age); got != tc.want {
			t.Errorf("crossed(own %s, any %s, age %s) = %s, want %s", tc.own, tc.any, tc.age, got, tc.want)
		}
	}
}

func TestStuckAfterSetting(t *testing.T) {
	got, err := parseStuckAfter(" cluster.create=30m, NodePool.Update=2h,any=90m ")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultStuckAfter()
	want[StuckKey{document.KindCluster, document.RequestCreate}] = 30 * time.Minute
	want[StuckKey{document.KindNodePool, document.RequestUpdate}] = 2 * time.Hour
	want[StuckAny] = 90 * time.Minute
	for k, d := range want {
		if got[k] != d {
			t.Errorf("%s = %s, want %s", k, got[k], d)
		}
	}
	if len(got) != 12 {
		t.Errorf("%d thresholds, want the 11 pairs and the backstop: %v", len(got), got)
	}
	for _, bad := range []struct{ value, names string }{
		{"cluster.create", `"cluster.create"`},
		{"cluster.creat=20m", `"cluster.creat=20m"`},
		{"cluster.create=soon", `"soon"`},
		{"cluster.create=-5m", `"-5m"`},
		{"nodepool.requestcredential=5m", "nodepool.requestcredential"},
	} {
		_, err := ConfigFromEnv(func(k string) string {
			if k == EnvStuckAfter {
				return bad.value
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), EnvStuckAfter) || !strings.Contains(err.Error(), bad.names) {
			t.Errorf("%s=%q: err = %v, want one naming the setting and %s", EnvStuckAfter, bad.value, err, bad.names)
		}
	}
}

// jsonRecords parses the lines a JSON slog handler wrote.
func jsonRecords(t *testing.T, b *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func named(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// TestStuckSignals: every tick writes what it saw active; an operation
// that stays in Updating writes MsgStuck once per threshold it passes
// (its own, then the backstop's), not once a tick; an engine that starts
// afresh writes the current crossing once more; an operation that ends
// leaves the counts.
func TestStuckSignals(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CreateDeadline = 10 * time.Hour })
	logs := &syncBuffer{}
	engine := func() *Engine {
		eng, err := New(Deps{Store: e.store, ClusterService: e.cs, Calls: e.calls, Clock: e.clk,
			Notifier: e.notifier(),
			Logger:   slog.New(slog.NewJSONHandler(logs, nil))}, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	e.engine = engine()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("JSON engine log:\n%s", logs.String())
		}
	})
	e.readyCluster(t, "stuck")
	d := e.sim.Durations()
	d.ClusterUpdating = 100 * time.Hour
	e.sim.SetDurations(d)
	start := e.clk.Now()
	// An update: ARO-HCP gives it 45 minutes, and it has no deadline here.
	name := e.update(t, clusterRID("stuck"), request{}, func(s *spec) { s.cluster.NodeDrainTimeoutMinutes = new(30) })
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}

	// tickAt ticks at start+at and returns the records that tick wrote.
	tickAt := func(at time.Duration) (active map[string]any, stuck []map[string]any) {
		t.Helper()
		e.clk.Set(start.Add(at))
		before := len(jsonRecords(t, logs))
		e.tick(t)
		recs := jsonRecords(t, logs)[before:]
		a := named(recs, MsgActive)
		if len(a) != 1 {
			t.Fatalf("tick at %s wrote %d %s records, want 1:\n%s", at, len(a), MsgActive, logs.String())
		}
		return a[0], named(recs, MsgStuck)
	}
	group := func(active map[string]any) map[string]any {
		t.Helper()
		gs, _ := active["groups"].([]any)
		if len(gs) != 1 || active["active"] != 1.0 || active["complete"] != true {
			t.Fatalf("%s = %v, want one complete group of one", MsgActive, active)
		}
		return gs[0].(map[string]any)
	}

	var crossings []float64
	for _, step := range []struct {
		at         time.Duration
		crossing   float64 // threshold_seconds written, 0 for none
		stuckCount float64
	}{
		{2 * time.Minute, 0, 0},
		{44 * time.Minute, 0, 0},
		{46 * time.Minute, 2700, 1}, // cluster update: ARO-HCP's 45 minutes
		{47 * time.Minute, 0, 1},
		{59 * time.Minute, 0, 1},
		{61 * time.Minute, 3600, 1}, // the backstop's hour
		{62 * time.Minute, 0, 1},
		{125 * time.Minute, 7200, 1},
	} {
		active, stuck := tickAt(step.at)
		g := group(active)
		if g["kind"] != "cluster" || g["request"] != "Update" || (g["status"] != "Updating" && step.at > 2*time.Minute) ||
			g["oldest_operation_id"] != name || g["oldest_resource_id"] != clusterRID("stuck") ||
			g["oldest_seconds"] != step.at.Seconds() || g["stuck"] != step.stuckCount || g["count"] != 1.0 {
			t.Errorf("at %s: group %v, want the cluster update %s, %s old, stuck %v", step.at, g, name, step.at, step.stuckCount)
		}
		switch {
		case step.crossing == 0 && len(stuck) != 0:
			t.Errorf("at %s: %v, want no %s (a crossing is written once)", step.at, stuck, MsgStuck)
		case step.crossing != 0 && len(stuck) != 1:
			t.Errorf("at %s: %d %s records, want one", step.at, len(stuck), MsgStuck)
		case step.crossing != 0:
			s := stuck[0]
			crossings = append(crossings, s["threshold_seconds"].(float64))
			if s["level"] != "WARN" || s["operation_id"] != name || s["resource_id"] != clusterRID("stuck") ||
				s["request"] != "Update" || s["kind"] != "cluster" || s["status"] != "Updating" ||
				s["threshold_seconds"] != step.crossing || s["stuck_after_seconds"] != 2700.0 ||
				s["seconds_since_start"] != step.at.Seconds() || s["cluster_service_id"] == "" {
				t.Errorf("at %s: %s = %v, want threshold %v", step.at, MsgStuck, s, step.crossing)
			}
		}
	}
	if len(crossings) != 3 {
		t.Fatalf("crossings %v, want 45m, 1h and 2h", crossings)
	}

	// Another process takes the timer over: it has not written the
	// current crossing, so it writes it once.
	e.engine = engine()
	if _, stuck := tickAt(126 * time.Minute); len(stuck) != 1 || stuck[0]["threshold_seconds"] != 7200.0 {
		t.Errorf("first tick of a new engine wrote %v, want the 2h crossing once", stuck)
	}
	if _, stuck := tickAt(127 * time.Minute); len(stuck) != 0 {
		t.Errorf("second tick of a new engine wrote %v", stuck)
	}

	// Once CS finishes, the operation leaves the counts.
	e.clk.Set(start.Add(101 * time.Hour))
	e.drive(t, name)
	active, stuck := tickAt(102 * time.Hour)
	if gs, _ := active["groups"].([]any); len(gs) != 0 || active["active"] != 0.0 || len(stuck) != 0 {
		t.Errorf("after the operation ended: %v, %v; want no groups and no crossing", active, stuck)
	}
}

// TestActiveCountsAcrossPages: the counts and the oldest operation of a
// group are the tick's, not one page's, whether each operation is a page
// of its own or one page holds them all (kinds mixed in it).
func TestActiveCountsAcrossPages(t *testing.T) {
	for _, pageSize := range []int{1, 100} {
		t.Run(fmt.Sprintf("page size %d", pageSize), func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.PageSize = pageSize })
			logs := &syncBuffer{}
			eng, err := New(Deps{Store: e.store, ClusterService: e.cs, Calls: e.calls, Clock: e.clk,
				Notifier: e.notifier(),
				Logger:   slog.New(slog.NewJSONHandler(logs, nil))}, e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			e.engine = eng
			first := e.create(t, document.KindCluster, clusterRID("c1"), request{})
			for _, c := range []string{"c2", "c3"} {
				e.clk.Advance(10 * time.Second)
				e.create(t, document.KindCluster, clusterRID(c), request{})
			}
			np := e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{})
			e.clk.Advance(10 * time.Second) // nothing delivered, and within the dispatch grace: all stay Accepted
			e.tick(t)
			active := named(jsonRecords(t, logs), MsgActive)
			if len(active) != 1 {
				t.Fatalf("%d %s records, want 1", len(active), MsgActive)
			}
			want := map[string]map[string]any{
				"cluster": {"count": 3.0, "stuck": 0.0, "oldest_operation_id": first, "oldest_seconds": 30.0},
				"node pool": {"count": 1.0, "stuck": 0.0, "oldest_operation_id": np, "oldest_seconds": 10.0,
					"oldest_resource_id": nodePoolRID("c1", "np1")},
			}
			gs, _ := active[0]["groups"].([]any)
			if len(gs) != 2 || active[0]["active"] != 4.0 {
				t.Fatalf("%s = %v, want 4 operations in 2 groups", MsgActive, active[0])
			}
			for _, g := range gs {
				g := g.(map[string]any)
				w := want[g["kind"].(string)]
				if w == nil || g["request"] != "Create" || g["status"] != "Accepted" {
					t.Errorf("unexpected group %v", g)
					continue
				}
				for k, v := range w {
					if g[k] != v {
						t.Errorf("%s group: %s = %v, want %v", g["kind"], k, g[k], v)
					}
				}
			}
		})
	}
}
