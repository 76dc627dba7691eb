package triggerhost

import (
	"encoding/json"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/events"
)

const hostJSON = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"hcpops"}}}`

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func timerFunction(schedule string, extra string) string {
	return `{"bindings":[{"type":"timerTrigger","direction":"in","name":"myTimer","schedule":"` + schedule + `"` + extra + `}]}`
}

func TestTimerPayloadShapeAndHeaders(t *testing.T) {
	th := newTestHandler()
	clock := newFakeClock(time.Date(2025, 3, 14, 9, 29, 30, 0, time.UTC))
	app := writeApp(t, hostJSON, map[string]string{"Housekeeping": timerFunction("0 */1 * * * *", "")})
	startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), Clock: clock})

	if at := clock.AwaitWaiter(t); !at.Equal(time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)) {
		t.Fatalf("first run due at %s, want 09:30:00", at)
	}
	clock.Set(time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC))
	first := th.next(t)
	if first.Method != "POST" || first.Path != "/Housekeeping" {
		t.Fatalf("request %s %s, want POST /Housekeeping", first.Method, first.Path)
	}
	for _, h := range []struct{ name, want string }{
		{"Content-Type", "application/json; charset=utf-8"},
		{"User-Agent", "Azure-Functions-Host/" + DefaultHostVersion},
		{events.HeaderHostVersion, DefaultHostVersion},
	} {
		if got := first.Header.Get(h.name); got != h.want {
			t.Errorf("header %s = %q, want %q", h.name, got, h.want)
		}
	}
	if id := first.Header.Get(events.HeaderInvocationID); !uuidRE.MatchString(id) {
		t.Errorf("invocation id %q is not a GUID", id)
	}
	data, meta := first.envelope(t)
	wantFirst := `{"Schedule":{"AdjustForDST":true},"ScheduleStatus":{"Last":"0001-01-01T00:00:00+00:00","Next":"2025-03-14T09:30:00+00:00","LastUpdated":"0001-01-01T00:00:00+00:00"},"IsPastDue":false}`
	if got := string(data["myTimer"]); got != wantFirst {
		t.Errorf("first TimerInfo\n got %s\nwant %s", got, wantFirst)
	}
	var sys struct{ MethodName, UtcNow, RandGuid string }
	must(t, json.Unmarshal(meta["sys"], &sys))
	if sys.MethodName != "Housekeeping" || sys.UtcNow != "2025-03-14T09:30:00Z" || !uuidRE.MatchString(sys.RandGuid) {
		t.Errorf("sys = %+v", sys)
	}
	if _, ok := meta["RetryContext"]; ok {
		t.Error("RetryContext sent for a function without a retry policy")
	}
	if len(meta) != 1 {
		t.Errorf("metadata keys = %d, want only sys", len(meta))
	}
	// The project's own timer adapter must read what this host sends.
	info, err := events.DecodeTimerInfo("Data.myTimer", data["myTimer"])
	if err != nil || info.ScheduleStatus == nil || !info.ScheduleStatus.Last.IsZero() || info.IsPastDue {
		t.Errorf("DecodeTimerInfo = %+v, %v", info, err)
	}

	clock.AwaitWaiter(t)
	clock.Set(time.Date(2025, 3, 14, 9, 31, 0, 0, time.UTC))
	second := th.next(t)
	data, _ = second.envelope(t)
	wantSecond := `{"Schedule":{"AdjustForDST":true},"ScheduleStatus":{"Last":"2025-03-14T09:30:00+00:00","Next":"2025-03-14T09:31:00+00:00","LastUpdated":"2025-03-14T09:30:00+00:00"},"IsPastDue":false}`
	if got := string(data["myTimer"]); got != wantSecond {
		t.Errorf("second TimerInfo\n got %s\nwant %s", got, wantSecond)
	}
	if second.Header.Get(events.HeaderInvocationID) == first.Header.Get(events.HeaderInvocationID) {
		t.Error("invocation id reused across invocations")
	}
}

func TestTimerStatusNullWithoutMonitor(t *testing.T) {
	tests := []struct{ name, schedule, extra string }{
		{"sub-minute schedule", "*/10 * * * * *", ""},
		{"useMonitor false", "0 */5 * * * *", `,"useMonitor":false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := newTestHandler()
			clock := newFakeClock(time.Date(2025, 3, 14, 9, 0, 1, 0, time.UTC))
			app := writeApp(t, hostJSON, map[string]string{"tick": timerFunction(tc.schedule, tc.extra)})
			startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), Clock: clock})
			clock.Set(clock.AwaitWaiter(t))
			data, _ := th.next(t).envelope(t)
			want := `{"Schedule":{"AdjustForDST":true},"ScheduleStatus":null,"IsPastDue":false}`
			if got := string(data["myTimer"]); got != want {
				t.Errorf("TimerInfo = %s, want %s", got, want)
			}
		})
	}
}

func TestTimerCatchesUpMissedRunAfterRestart(t *testing.T) {
	th := newTestHandler()
	state := t.TempDir()
	clock := newFakeClock(time.Date(2025, 3, 14, 9, 59, 59, 0, time.UTC))
	app := writeApp(t, hostJSON, map[string]string{"hourly": timerFunction("0 0 * * * *", "")})
	// A previous host ran at 09:00 and expected 10:00; it is now 10:20.
	must(t, stateDir(state).save("timers", "hourly", scheduleStatus{
		Last:        time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC),
		Next:        time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC),
		LastUpdated: time.Date(2025, 3, 14, 9, 0, 0, 5e6, time.UTC),
	}))
	clock.Set(time.Date(2025, 3, 14, 10, 20, 0, 0, time.UTC))
	startHost(t, Config{App: app, Worker: th.worker(), StateDir: state, Clock: clock})
	data, _ := th.next(t).envelope(t)
	want := `{"Schedule":{"AdjustForDST":true},"ScheduleStatus":{"Last":"2025-03-14T09:00:00+00:00","Next":"2025-03-14T10:00:00+00:00","LastUpdated":"2025-03-14T09:00:00.005+00:00"},"IsPastDue":true}`
	if got := string(data["myTimer"]); got != want {
		t.Errorf("catch-up TimerInfo\n got %s\nwant %s", got, want)
	}
	if at := clock.AwaitWaiter(t); !at.Equal(time.Date(2025, 3, 14, 11, 0, 0, 0, time.UTC)) {
		t.Errorf("after the catch-up the next run is due %s, want 11:00", at)
	}
	var saved scheduleStatus
	if found, err := stateDir(state).load("timers", "hourly", &saved); !found || err != nil ||
		!saved.Last.Equal(time.Date(2025, 3, 14, 10, 20, 0, 0, time.UTC)) {
		t.Errorf("persisted status = %+v (found %v, %v), want Last 10:20", saved, found, err)
	}
}

func TestTimerRunsNeverOverlapAndMissedRunsCollapse(t *testing.T) {
	th := newTestHandler()
	release := make(chan struct{})
	var inFlight, maxInFlight atomic.Int32
	th.setRespond(func(recorded) (int, string) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		return 200, `{"Outputs":{},"Logs":[],"ReturnValue":null}`
	})
	start := time.Date(2025, 3, 14, 9, 0, 1, 0, time.UTC)
	clock := newFakeClock(start)
	app := writeApp(t, hostJSON, map[string]string{"tick": timerFunction("*/10 * * * * *", "")})
	startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), Clock: clock})

	clock.Set(clock.AwaitWaiter(t)) // 09:00:10
	th.next(t)
	// The run is still going while three more occurrences pass.
	// An overlapping run would enter respond before the release: maxInFlight.
	clock.Set(time.Date(2025, 3, 14, 9, 0, 45, 0, time.UTC))
	release <- struct{}{}
	// The overdue occurrence fires once, at once, without the clock moving.
	th.next(t)
	release <- struct{}{}
	if at := clock.AwaitWaiter(t); !at.Equal(time.Date(2025, 3, 14, 9, 0, 50, 0, time.UTC)) {
		t.Errorf("after catching up the next run is due %s, want 09:00:50", at)
	}
	th.noneQueued(t) // the timer waits for 09:00:50: no run is left to come
	if maxInFlight.Load() != 1 {
		t.Errorf("%d invocations overlapped, want 1 at a time", maxInFlight.Load())
	}
}

func TestParseSchedule(t *testing.T) {
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		expr      string
		next      time.Time
		dst, sub  bool
		wantError bool
	}{
		{expr: "0 */5 * * * *", next: at.Add(5 * time.Minute), dst: true},
		{expr: "*/10 * * * * *", next: at.Add(10 * time.Second), dst: true, sub: true},
		{expr: "30 0 9 * * Fri", next: at.Add(30 * time.Second), dst: true},
		{expr: "00:00:30", next: at.Add(30 * time.Second), sub: true},
		{expr: "01:00:00", next: at.Add(time.Hour)},
		{expr: "*/5 * * * *", wantError: true},
		{expr: "0 0 0 30 2 *", wantError: true},
		{expr: "00:00:00", wantError: true},
	}
	for _, tc := range tests {
		s, err := parseSchedule(tc.expr, time.UTC)
		if tc.wantError {
			if err == nil {
				t.Errorf("parseSchedule(%q) succeeded, want an error", tc.expr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSchedule(%q): %v", tc.expr, err)
			continue
		}
		if got := s.next(at); !got.Equal(tc.next) || s.adjustForDST != tc.dst || s.subMinute != tc.sub {
			t.Errorf("parseSchedule(%q): next %s dst %v sub %v; want %s %v %v", tc.expr, got, s.adjustForDST, s.subMinute, tc.next, tc.dst, tc.sub)
		}
	}
}
