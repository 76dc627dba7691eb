package triggerhost

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// ncrontab is the timer trigger's six-field format: second minute hour
// day month day-of-week.
var ncrontab = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// timerSchedule is a parsed timerTrigger schedule.
type timerSchedule struct {
	next func(time.Time) time.Time
	// adjustForDST is TimerInfo.Schedule.AdjustForDST: true for NCRONTAB,
	// false for a TimeSpan.
	adjustForDST bool
	// subMinute schedules run without the schedule monitor, as the host
	// turns useMonitor off for them.
	subMinute bool
}

// parseSchedule reads an NCRONTAB expression, or a TimeSpan (hh:mm:ss),
// which the host accepts on App Service plans. Occurrences are computed in
// loc (UTC on Azure unless WEBSITE_TIME_ZONE says otherwise).
func parseSchedule(expr string, loc *time.Location) (timerSchedule, error) {
	if every, err := functionapp.ParseTimeSpan(expr); err == nil {
		if every <= 0 {
			return timerSchedule{}, fmt.Errorf("schedule %q: a TimeSpan schedule must be positive", expr)
		}
		return timerSchedule{
			next:      func(t time.Time) time.Time { return t.Add(every) },
			subMinute: every < time.Minute,
		}, nil
	}
	sched, err := ncrontab.Parse(expr)
	if err != nil {
		return timerSchedule{}, fmt.Errorf("schedule %q: want six-field NCRONTAB (second minute hour day month day-of-week) or hh:mm:ss: %w", expr, err)
	}
	next := func(t time.Time) time.Time { return sched.Next(t.In(loc)) }
	// Sub-minute if any of the next few gaps is shorter than a minute.
	t := next(time.Date(2025, 1, 1, 0, 0, 0, 0, loc))
	if t.IsZero() {
		return timerSchedule{}, fmt.Errorf("schedule %q never fires", expr)
	}
	sub := false
	for range 5 {
		n := next(t)
		if n.IsZero() {
			break
		}
		sub = sub || n.Sub(t) < time.Minute
		t = n
	}
	return timerSchedule{next: next, adjustForDST: true, subMinute: sub}, nil
}
