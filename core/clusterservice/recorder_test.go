package clusterservice

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

type scopeKey struct{}

func scoped(id string) context.Context {
	return context.WithValue(context.Background(), scopeKey{}, id)
}

func scopeOf(ctx context.Context) string { s, _ := ctx.Value(scopeKey{}).(string); return s }

// TestRecorderCountsPerInvocation: each invocation's numbers are its own
// requests', 404s are answers, overlapping work of one invocation shares
// them, and requests of no invocation (or outside a Count) count nowhere.
func TestRecorderCountsPerInvocation(t *testing.T) {
	r := NewRecorder(nil, scopeOf)
	a, b := scoped("a"), scoped("b")
	doneA := r.Count(a)
	doneB := r.Count(b)
	again := r.Count(b)
	r.Record(a, time.Millisecond, Answered)
	r.Record(a, 3*time.Millisecond, Absent)
	r.Record(a, 2*time.Millisecond, Unavailable)
	r.Record(b, time.Second, Failed)
	r.Record(context.Background(), time.Second, Failed)
	r.Record(scoped("c"), time.Second, Failed)
	if got, want := doneA(), (CallSummary{Count: 3, Errors: 1, P50: 2 * time.Millisecond, P99: 3 * time.Millisecond}); got != want {
		t.Errorf("a = %+v, want %+v", got, want)
	}
	if got := doneA(); got.Count != 3 {
		t.Errorf("a's second read = %+v, want the same numbers", got)
	}
	r.Record(a, time.Second, Failed) // a is closed
	if got := doneB(); got.Count != 1 || got.Errors != 1 {
		t.Errorf("b = %+v, want one failed request", got)
	}
	r.Record(b, time.Second, Answered) // still open for again
	if got := again(); got.Count != 2 || got.Errors != 1 {
		t.Errorf("b's overlapping count = %+v, want both requests", got)
	}
	if n := len(r.open); n != 0 {
		t.Errorf("%d scopes still open after every Count closed", n)
	}
	if got := r.Count(context.Background())(); got != (CallSummary{}) {
		t.Errorf("no invocation = %+v, want nothing counted", got)
	}
	var none *Recorder
	none.Record(a, time.Second, Failed)
	if got := none.Count(a)(); got != (CallSummary{}) || none.WorkedSince(time.Time{}) {
		t.Errorf("nil recorder counted %+v", got)
	}
}

// TestRecorderWorkedSince: only a working CS's answer is evidence, dated
// by the recorder's clock.
func TestRecorderWorkedSince(t *testing.T) {
	clk := testsupport.NewClock(testsupport.Epoch())
	r := NewRecorder(clk, nil)
	start := clk.Now()
	if r.WorkedSince(start.Add(-time.Hour)) {
		t.Fatal("evidence before any request")
	}
	r.Record(context.Background(), time.Second, Failed)
	r.Record(context.Background(), time.Second, Unavailable)
	if r.WorkedSince(start.Add(-time.Hour)) {
		t.Fatal("a failed call counted as evidence")
	}
	clk.Advance(time.Minute)
	r.Record(context.Background(), time.Second, Refused)
	if !r.WorkedSince(start.Add(time.Minute)) || r.WorkedSince(start.Add(2*time.Minute)) {
		t.Errorf("a refusal a minute in: worked since then %v, since later %v; want true, false",
			r.WorkedSince(start.Add(time.Minute)), r.WorkedSince(start.Add(2*time.Minute)))
	}
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(hundred...), 50, 50 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 1000), 99, 1000 * time.Millisecond},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %d) = %v, want %v", tc.sorted, tc.p, got, tc.want)
		}
	}
}

func TestCallSummaryAttrs(t *testing.T) {
	got := CallSummary{Count: 3, Errors: 1, Unrecognized: 1, P50: 1500 * time.Microsecond, P99: 2 * time.Second}.Attrs()
	want := "[cs_calls=3 cs_errors=1 cs_unrecognized=1 cs_p50_ms=1.5 cs_p99_ms=2000]"
	if s := fmt.Sprint(got); s != want {
		t.Errorf("Attrs() = %s, want %s", s, want)
	}
}

// TestRecorderUnrecognized: an answer found no evidence after it was
// recorded as answered counts as an unrecognized error of its invocation,
// not as another request; outside an invocation, or on a nil recorder,
// nowhere.
func TestRecorderUnrecognized(t *testing.T) {
	r := NewRecorder(nil, scopeOf)
	a := scoped("a")
	done := r.Count(a)
	r.Record(a, time.Millisecond, Answered)
	r.Unrecognized(a)
	r.Unrecognized(scoped("b"))
	r.Unrecognized(context.Background())
	if got := done(); got.Count != 1 || got.Errors != 1 || got.Unrecognized != 1 {
		t.Errorf("a = %+v, want one request, one error, one unrecognized", got)
	}
	var none *Recorder
	none.Unrecognized(a) // no panic
}
