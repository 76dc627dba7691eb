package kql

import (
	"testing"
	"time"
)

func TestParseKQL(t *testing.T) {
	const q = `// alert: x. Parameters: limit.
let hcpops = traces
    | extend msg = tostring(r.msg);
hcpops
| where at > ago(15m) and msg in ("a.b", "c.d") and tostring(r.outcome) == "failed"
| extend n = toint(r['count']), recent = at > ago(2d)
| where n * 2 >= limit and msg == "a.b"
`
	k, err := Parse(q, []string{"limit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"prelude", k.Prelude, "let hcpops = traces\n    | extend msg = tostring(r.msg);"},
		{"events", join(k.Events), "a.b c.d"},
		{"windows", join(k.Windows), "15m 2d"},
		{"fields", join(k.Fields), "count outcome"},
		{"literals", join(k.Literals), "failed"},
		{"numbers", join(k.Numbers), "2"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if d, err := k.Window(1); err != nil || d != 48*time.Hour {
		t.Errorf("Window(1) = %v, %v; want 48h", d, err)
	}
	if ok, err := k.Compare("2", "limit", 3, 3); err != nil || !ok {
		t.Errorf("Compare(2 >= limit) on 3, 3 = %v, %v; want true", ok, err)
	}
	if _, err := k.Compare("n", "other", 1, 1); err == nil {
		t.Error("Compare of a comparison the query lacks: no error")
	}
	if _, err := Parse("traces | take 1", nil); err == nil {
		t.Error("a query without the prelude: no error")
	}
	for s, want := range map[string]time.Duration{"30s": 30 * time.Second, "1.5h": 90 * time.Minute, "2d": 48 * time.Hour} {
		if d, err := Timespan(s); err != nil || d != want {
			t.Errorf("Timespan(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
	for _, bad := range []string{"", "15", "x1m", "long_window"} {
		if _, err := Timespan(bad); err == nil {
			t.Errorf("Timespan(%q): no error", bad)
		}
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}
