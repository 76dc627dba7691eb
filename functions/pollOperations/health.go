package polloperations

import (
	"sync"
	"time"
)

// HealthName is the key of the timer's report in the health route's body.
const HealthName = "poll"

// tickHealth is what the health route says of the timer: the last tick
// that ended, and the one under way, so a probe tells a wedged timer (no
// tick for many periods, or one that never ends) from a healthy one.
type tickHealth struct {
	mu      sync.Mutex
	started time.Time // of the tick under way; zero: none
	last    *lastTick
}

// lastTick is the report of the last tick that ended.
type lastTick struct {
	At         time.Time `json:"at"`
	AgeSeconds float64   `json:"ageSeconds"`
	Outcome    string    `json:"outcome"`
	WallMs     float64   `json:"wallMs"`
	BudgetMs   float64   `json:"budgetMs"`
}

// Report is the timer's part of the health body.
type Report struct {
	// LastTick is nil until a tick has ended in this process.
	LastTick *lastTick `json:"lastTick"`
	// RunningSeconds is how long the tick under way has run; absent when
	// none is.
	RunningSeconds *float64 `json:"runningSeconds,omitempty"`
}

func (h *tickHealth) begin(at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = at
}

func (h *tickHealth) end(at time.Time, outcome string, wall, budget time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = time.Time{}
	h.last = &lastTick{At: at.UTC(), Outcome: outcome, WallMs: millis(wall), BudgetMs: millis(budget)}
}

func (h *tickHealth) report(now time.Time) Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	var r Report
	if h.last != nil {
		l := *h.last
		l.AgeSeconds = now.Sub(l.At).Seconds()
		r.LastTick = &l
	}
	if !h.started.IsZero() {
		s := now.Sub(h.started).Seconds()
		r.RunningSeconds = &s
	}
	return r
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
