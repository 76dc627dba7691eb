package polloperations

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// recordingTicker records each Tick's deadline and answers with canned
// counts, an error, or by waiting for its context to end.
type recordingTicker struct {
	mu        sync.Mutex
	deadlines []time.Time
	err       error
	block     bool
	// started, when set, is closed as the first Tick begins.
	started     chan struct{}
	startedOnce sync.Once
}

func (r *recordingTicker) Tick(ctx context.Context) (lifecycle.TickResult, error) {
	r.mu.Lock()
	dl, _ := ctx.Deadline()
	r.deadlines = append(r.deadlines, dl)
	block, err := r.block, r.err
	r.mu.Unlock()
	if r.started != nil {
		r.startedOnce.Do(func() { close(r.started) })
	}
	res := lifecycle.TickResult{Polled: 7, Changed: 3, Dispatched: 1, Expired: 1, Canceled: 0, Notified: 2, Errors: 1, BackedOff: 3,
		Skipped: 2, SkippedReasons: map[string]int{lifecycle.SkipNoActiveOperation: 2, lifecycle.SkipResourceDeleting: 0}, VersionsRecorded: 4}
	if block {
		<-ctx.Done()
		return lifecycle.TickResult{Polled: 2}, ctx.Err()
	}
	return res, err
}

func (r *recordingTicker) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.deadlines)
}

func newServer(t *testing.T, tk Ticker, cfg Config) *httptest.Server {
	t.Helper()
	ts, _ := newLoggedServer(t, tk, cfg)
	return ts
}

func newLoggedServer(t *testing.T, tk Ticker, cfg Config) (*httptest.Server, *testsupport.Records) {
	t.Helper()
	recs := &testsupport.Records{}
	logger := slog.New(slog.NewJSONHandler(recs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := handlers.New(handlers.Config{}, logger)
	if err := New(tk, cfg, logger).Register(s); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, recs
}

func postBody(t *testing.T, ts *httptest.Server, body []byte) invoke.Reply {
	t.Helper()
	return invoke.Post(t, ts, Name, body, nil)
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var wantCounts = map[string]any{"polled": 7, "changed": 3, "dispatched": 1, "expired": 1, "canceled": 0, "notified": 2, "errors": 1, "backed_off": 3,
	"skipped": 2, "versions_recorded": 4}

func TestGoldenTicks(t *testing.T) {
	tests := []struct {
		file    string
		pastDue bool
	}{
		{"tick.json", false},
		{"tick-first-run-legacy.json", false},
		{"tick-no-monitor.json", false},
		{"tick-past-due.json", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tk := &recordingTicker{}
			ts, recs := newLoggedServer(t, tk, Config{Budget: 90 * time.Second})
			start := time.Now()
			got := postBody(t, ts, readFile(t, tt.file))
			end := time.Now()
			if got.Status != http.StatusOK {
				t.Fatalf("status = %d, error %q", got.Status, got.Error)
			}
			if len(got.Logs) != 0 {
				t.Errorf("Logs = %q; the record is the one line, Logs would repeat it", got.Logs)
			}
			r := recs.Wait(t, MsgTick)
			testsupport.WantAttrs(t, r, wantCounts)
			if reasons, _ := r["skipped_reasons"].(map[string]any); reasons[lifecycle.SkipNoActiveOperation] != 2.0 ||
				reasons[lifecycle.SkipResourceDeleting] != 0.0 {
				t.Errorf("skipped_reasons = %v, want %s 2 and %s 0", r["skipped_reasons"], lifecycle.SkipNoActiveOperation, lifecycle.SkipResourceDeleting)
			}
			testsupport.WantAttrs(t, r, map[string]any{"level": "INFO", "outcome": OutcomeOK, "past_due": tt.pastDue, "budget_ms": 90000, "status": 200})
			if tk.calls() != 1 {
				t.Fatalf("Tick called %d times", tk.calls())
			}
			// the tick ran under the configured budget
			wantDeadline(t, tk.deadlines[0], start, end, 90*time.Second)
		})
	}
}

func TestDefaultBudget(t *testing.T) {
	tk := &recordingTicker{}
	ts := newServer(t, tk, Config{})
	start := time.Now()
	if got := postBody(t, ts, readFile(t, "tick.json")); got.Status != http.StatusOK {
		t.Fatalf("status = %d", got.Status)
	}
	wantDeadline(t, tk.deadlines[0], start, time.Now(), DefaultBudget)
}

// wantDeadline checks that a tick's deadline is budget after some moment
// of the invocation [start, end]: exact however long the invocation took
// on a loaded machine.
func wantDeadline(t *testing.T, dl, start, end time.Time, budget time.Duration) {
	t.Helper()
	if dl.Before(start.Add(budget)) || dl.After(end.Add(budget)) {
		t.Errorf("tick deadline %v is not %v after the invocation (%v .. %v)", dl, budget, start, end)
	}
}

func TestBudgetExhaustedIsNotAFailure(t *testing.T) {
	tk := &recordingTicker{block: true}
	ts, recs := newLoggedServer(t, tk, Config{Budget: 20 * time.Millisecond})
	got := postBody(t, ts, readFile(t, "tick.json"))
	if got.Status != http.StatusOK {
		t.Fatalf("status = %d, error %q", got.Status, got.Error)
	}
	r := recs.Wait(t, MsgTick)
	testsupport.WantAttrs(t, r, map[string]any{"level": "WARN", "outcome": OutcomeBudget, "polled": 2, "status": 200, "budget_ms": 20})
	if used, _ := r["budget_used"].(float64); used < 1 {
		t.Errorf("budget_used = %v, want >= 1 for a tick stopped by its budget", r["budget_used"])
	}
}

func TestTickErrorIs500(t *testing.T) {
	tk := &recordingTicker{err: errors.New("store: query active operations: connection refused")}
	ts, recs := newLoggedServer(t, tk, Config{})
	got := postBody(t, ts, readFile(t, "tick.json"))
	if got.Status != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500", got.Status)
	}
	if !strings.Contains(got.Error, "running poll tick: store: query active operations: connection refused") {
		t.Errorf("Error = %q", got.Error)
	}
	// The cause is in the record (stderr); the host drops a failed
	// invocation's Logs.
	r := recs.Wait(t, MsgTick)
	testsupport.WantAttrs(t, r, wantCounts)
	testsupport.WantAttrs(t, r, map[string]any{"level": "ERROR", "outcome": OutcomeFailed, "status": 500,
		"error": "running poll tick: store: query active operations: connection refused"})
}

// TestReferencePayload: the protocol reference's tick decodes, and posted
// as is (its binding is "myTimer", ours "timer") it is refused by name.
func TestReferencePayload(t *testing.T) {
	body := readFile(t, "reference-timer-tick.json")
	var env struct{ Data map[string]json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	info, err := events.DecodeTimerInfo("Data.myTimer", env.Data["myTimer"])
	if err != nil {
		t.Fatal(err)
	}
	wantNext := time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)
	if !info.Schedule.AdjustForDST || info.IsPastDue || info.ScheduleStatus == nil || !info.ScheduleStatus.Next.Equal(wantNext) ||
		info.ScheduleStatus.Last.Nanosecond() != 13241700 {
		t.Errorf("decoded %+v / %+v", info, info.ScheduleStatus)
	}
	tk := &recordingTicker{}
	ts := newServer(t, tk, Config{})
	got := postBody(t, ts, body)
	if got.Status != http.StatusBadRequest || !strings.Contains(got.Error, `Data.timer is missing`) {
		t.Errorf("status %d error %q", got.Status, got.Error)
	}
	if tk.calls() != 0 {
		t.Error("Tick was called")
	}
}

// TestMalformedTicks: each is a 400 naming the field, and Tick never runs.
func TestMalformedTicks(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"missing timer", `{"Data":{}}`, "Data.timer is missing"},
		{"timer is a string", `{"Data":{"timer":"hello"}}`, `Data.timer is a string, not the TimerInfo object: "hello"`},
		{"timer is a number", `{"Data":{"timer":10}}`, "Data.timer is a number"},
		{"timer is an array", `{"Data":{"timer":[]}}`, "Data.timer is an array"},
		{"timer is null", `{"Data":{"timer":null}}`, "Data.timer is null"},
		{"IsPastDue string", `{"Data":{"timer":{"IsPastDue":"yes"}}}`, "Data.timer.IsPastDue is a string; want true or false"},
		{"Schedule array", `{"Data":{"timer":{"Schedule":[true]}}}`, "Data.timer.Schedule is an array"},
		{"AdjustForDST number", `{"Data":{"timer":{"Schedule":{"AdjustForDST":1}}}}`, "Data.timer.Schedule.AdjustForDST is a number"},
		{"ScheduleStatus string", `{"Data":{"timer":{"ScheduleStatus":"none"}}}`, "Data.timer.ScheduleStatus is a string"},
		{"Last not a date", `{"Data":{"timer":{"ScheduleStatus":{"Last":"yesterday"}}}}`, `Data.timer.ScheduleStatus.Last: "yesterday" is not a timestamp`},
		{"Next a number", `{"Data":{"timer":{"ScheduleStatus":{"Next":1710408413}}}}`, "Data.timer.ScheduleStatus.Next is a number"},
		{"LastUpdated bad month", `{"Data":{"timer":{"ScheduleStatus":{"LastUpdated":"2026-13-01T00:00:00Z"}}}}`, "Data.timer.ScheduleStatus.LastUpdated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := &recordingTicker{}
			ts := newServer(t, tk, Config{})
			got := postBody(t, ts, []byte(tt.body))
			if got.Status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400 (error %q)", got.Status, got.Error)
			}
			if !strings.Contains(got.Error, tt.want) {
				t.Errorf("Error = %q, want it to contain %q", got.Error, tt.want)
			}
			if tk.calls() != 0 {
				t.Error("Tick was called")
			}
		})
	}
}
