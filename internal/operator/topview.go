package operator

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// lateAfter is how many typical intervals without a tick make the timer
// late in top's words.
const lateAfter = 3

// render prints the view: a line on the timer's health, the ticks newest
// first, and the latest tick's active operations by kind, request and
// status.
func (v *tickView) render(w io.Writer, prog, path, process string, now time.Time) {
	fmt.Fprintf(w, "%s top: %s at %s\n", prog, path, now.Format("15:04:05"))
	if process != "" {
		fmt.Fprintln(w, process)
	}
	if len(v.rows) == 0 {
		fmt.Fprintln(w, "no poll ticks recorded yet")
		return
	}
	last := v.rows[len(v.rows)-1].tick
	line := fmt.Sprintf("last tick %s ago: %s in %s of its %s budget", Age(now.Sub(last.Time)), last.Str("outcome"),
		millis(last.Num("wall_ms")), millis(last.Num("budget_ms")))
	if iv, ok := v.interval(); ok {
		line += fmt.Sprintf("; ticks every %s", Round(iv))
		if now.Sub(last.Time) > lateAfter*iv {
			line += fmt.Sprintf("; LATE: none for %s", Age(now.Sub(last.Time)))
		}
	}
	fmt.Fprintln(w, line)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STARTED\tOUTCOME\tWALL\tBUDGET\tACTIVE\tSTUCK\tPOLLED\tCHANGED\tSKIPPED\tERRORS\tCS\tCS ERR\tCS P99\t")
	for i := len(v.rows) - 1; i >= 0; i-- {
		t, a := v.rows[i].tick, v.rows[i].active
		active, stuck := "-", "-"
		if a.Msg != "" {
			active, stuck = fmt.Sprint(int(a.Num("active"))), fmt.Sprint(stuckOf(a))
			if c, _ := a.Attrs["complete"].(bool); !c {
				active += "+" // a lower bound: the tick stopped early
			}
		}
		// When it started, to the millisecond: its record is written when
		// it ends, so a hung tick and a quick one would share a second.
		started := t.Time.Add(-time.Duration(t.Num("wall_ms") * float64(time.Millisecond)))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", started.Local().Format("15:04:05.000"),
			strings.TrimSuffix(t.Str("outcome"), "_exhausted"), millis(t.Num("wall_ms")), 100*t.Num("budget_used"), active, stuck,
			int(t.Num("polled")), int(t.Num("changed")), int(t.Num("skipped")), int(t.Num("errors")),
			int(t.Num("cs_calls")), int(t.Num("cs_errors")), millis(t.Num("cs_p99_ms")))
	}
	tw.Flush()
	a := v.rows[len(v.rows)-1].active
	groups, _ := a.Attrs["groups"].([]any)
	if a.Msg == "" || len(groups) == 0 {
		fmt.Fprintln(w, "\nnothing active at the last tick")
		return
	}
	fmt.Fprintf(w, "\nactive at %s:\n", a.Time.Local().Format("15:04:05"))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tREQUEST\tSTATUS\tCOUNT\tSTUCK\tOLDEST")
	for _, g := range groups {
		m, _ := g.(map[string]any)
		num := func(k string) float64 { f, _ := m[k].(float64); return f }
		str := func(k string) string { s, _ := m[k].(string); return s }
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s %s\n", str("kind"), str("request"), str("status"), int(num("count")),
			int(num("stuck")), Age(time.Duration(num("oldest_seconds")*float64(time.Second))), str("oldest_operation_id"))
	}
	tw.Flush()
}

// interval is the median time between the ticks shown.
func (v *tickView) interval() (time.Duration, bool) {
	var gaps []time.Duration
	for i := 1; i < len(v.rows); i++ {
		gaps = append(gaps, v.rows[i].tick.Time.Sub(v.rows[i-1].tick.Time))
	}
	if len(gaps) == 0 {
		return 0, false
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2], true
}

func stuckOf(a Record) int {
	n := 0
	groups, _ := a.Attrs["groups"].([]any)
	for _, g := range groups {
		if m, ok := g.(map[string]any); ok {
			f, _ := m["stuck"].(float64)
			n += int(f)
		}
	}
	return n
}

// millis shows a number of milliseconds as a duration: 0.4ms, 12ms,
// 1.25s, 4m0s.
func millis(ms float64) string {
	switch {
	case ms < 10:
		return fmt.Sprintf("%.1fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0fms", ms)
	}
	return time.Duration(ms * float64(time.Millisecond)).Round(10 * time.Millisecond).String()
}
