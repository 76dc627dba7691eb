package polloperations

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// The health route says how the timer is doing: nothing before the first
// tick, a tick under way with how long it has run, then the last tick's
// outcome and age.
func TestHealthReportsTheLastTick(t *testing.T) {
	tk := &recordingTicker{block: true, started: make(chan struct{})}
	ts := newServer(t, tk, Config{Budget: 300 * time.Millisecond})
	health := func() (r struct {
		Status string
		Poll   Report
	}) {
		t.Helper()
		resp, err := http.Get(ts.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &r); err != nil || resp.StatusCode != 200 || r.Status != "ok" {
			t.Fatalf("health: %d %s %v", resp.StatusCode, b, err)
		}
		return r
	}
	if h := health(); h.Poll.LastTick != nil || h.Poll.RunningSeconds != nil {
		t.Errorf("before any tick: %+v", h.Poll)
	}
	done := make(chan struct{})
	go func() { defer close(done); postBody(t, ts, readFile(t, "tick.json")) }()
	<-tk.started
	if h := health(); h.Poll.RunningSeconds == nil || h.Poll.LastTick != nil {
		t.Errorf("during the first tick: %+v", h.Poll)
	}
	<-done
	h := health()
	if l := h.Poll.LastTick; l == nil || l.Outcome != OutcomeBudget || l.WallMs < 300 || l.BudgetMs != 300 || l.AgeSeconds < 0 || l.AgeSeconds > 5 ||
		h.Poll.RunningSeconds != nil {
		t.Errorf("after a tick its budget stopped: %+v %+v", h.Poll.LastTick, h.Poll.RunningSeconds)
	}
}
