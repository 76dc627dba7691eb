package triggerhost

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// scheduleStatus is what the host's schedule monitor keeps between runs.
type scheduleStatus struct {
	Last        time.Time `json:"last"`
	Next        time.Time `json:"next"`
	LastUpdated time.Time `json:"lastUpdated"`
}

// timerListener fires one timer function. It runs in a single goroutine, so
// invocations never overlap: the next due time is computed after a run ends
// from the time that run started, and a due time already past fires at once,
// so any number of missed occurrences collapse into one run.
type timerListener struct {
	host     *Host
	fn       functionapp.Function
	binding  functionapp.Binding
	schedule timerSchedule
	// monitor is useMonitor after the host's sub-minute rule: only then is
	// ScheduleStatus sent and persisted, and a missed run caught up.
	monitor bool
}

func (l *timerListener) run(ctx context.Context) error {
	h := l.host
	now := h.clock.Now()
	status := scheduleStatus{Next: l.schedule.next(now)}
	pastDue := false
	if l.monitor {
		var stored scheduleStatus
		found, err := h.state.load("timers", l.fn.Name, &stored)
		if err != nil {
			h.logger.LogAttrs(ctx, slog.LevelWarn, "ignoring unreadable timer status", slog.String("function", l.fn.Name), slog.Any("error", err))
		}
		switch {
		case found && now.After(stored.Next):
			status, pastDue = stored, true
		case found:
			status = stored
			status.Next = l.schedule.next(now)
		default:
			l.save(ctx, status)
		}
	}
	h.logger.LogAttrs(ctx, slog.LevelInfo, "timer scheduled", slog.String("function", l.fn.Name),
		slog.String("schedule", l.binding.Schedule), slog.Time("next", status.Next),
		slog.Bool("monitor", l.monitor), slog.Bool("past_due", pastDue))
	if pastDue || l.binding.RunOnStartup {
		status = l.fire(ctx, status, pastDue)
	}
	for ctx.Err() == nil {
		if wait := status.Next.Sub(h.clock.Now()); wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-h.clock.After(wait):
			}
		}
		status = l.fire(ctx, status, false)
	}
	return nil
}

// fire runs one invocation and returns the status for the next one.
func (l *timerListener) fire(ctx context.Context, before scheduleStatus, pastDue bool) scheduleStatus {
	h := l.host
	started := h.clock.Now()
	info := events.TimerInfo{Schedule: events.TimerSchedule{AdjustForDST: l.schedule.adjustForDST}, IsPastDue: pastDue}
	if l.monitor {
		info.ScheduleStatus = &events.ScheduleStatus{
			Last:        h.hostTime(before.Last),
			Next:        h.hostTime(before.Next),
			LastUpdated: h.hostTime(before.LastUpdated),
		}
	}
	raw, _ := json.Marshal(info) // plain structs and times: cannot fail
	// Failures are logged by invokeWithPolicy; a timer carries on with its
	// schedule regardless, as the host's listener does.
	_ = h.invokeWithPolicy(ctx, l.fn, map[string]json.RawMessage{l.binding.Name: raw})
	after := scheduleStatus{Last: started, Next: l.schedule.next(started), LastUpdated: h.clock.Now()}
	if l.monitor && ctx.Err() == nil {
		l.save(ctx, after)
	}
	return after
}

func (l *timerListener) save(ctx context.Context, s scheduleStatus) {
	if err := l.host.state.save("timers", l.fn.Name, s); err != nil {
		l.host.logger.LogAttrs(ctx, slog.LevelWarn, "could not persist timer status", slog.String("function", l.fn.Name), slog.Any("error", err))
	}
}

// hostTime is a time as the host writes it: in the host's zone, with its
// offset; the zero time (first run) stays 0001-01-01T00:00:00+00:00.
func (h *Host) hostTime(t time.Time) events.Time {
	if t.IsZero() {
		return events.Time{}
	}
	return events.Time{Time: t.In(h.location)}
}
