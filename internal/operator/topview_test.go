package operator

import (
	"strings"
	"testing"
	"time"
)

// top's first column is when a tick started, to the millisecond: a tick
// that hung 20 s and one of 0.1 ms whose records end in the same second
// are told apart.
func TestTopShowsWhenATickStarted(t *testing.T) {
	end := time.Date(2026, 3, 14, 10, 42, 20, 500_000_000, time.Local)
	tick := func(id string, at time.Time, wallMS float64) Record {
		return Record{Time: at, Msg: "poll.tick", Attrs: map[string]any{"invocation_id": id, "outcome": "ok",
			"wall_ms": wallMS, "budget_ms": 240000.0, "budget_used": wallMS / 240000}}
	}
	v := &tickView{keep: 5, pending: map[string]Record{}}
	v.add([]Record{tick("hung", end, 20000), tick("quick", end.Add(300*time.Millisecond), 0.1)})
	var out strings.Builder
	v.render(&out, "hcpopsctl", ".data/dev.log", "", end.Add(time.Second))
	for _, want := range []string{"10:42:00.500 ", "10:42:20.799 ", " STARTED "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("top lacks %q:\n%s", want, out.String())
		}
	}
}
