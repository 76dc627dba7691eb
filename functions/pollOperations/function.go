// Package polloperations is the pollOperations function: a timer trigger
// that runs one lifecycle tick (poll, safety-net dispatch, expiry, notify)
// within a budget kept below the host's functionTimeout.
package polloperations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/logging"
)

// Name is the function's folder name, the path the host posts to.
const Name = "pollOperations"

// BindingName is the timer binding's name in function.json.
const BindingName = "timer"

// DefaultBudget leaves a minute of host.json's functionTimeout (5 minutes)
// for the response to reach the host; a host that times out kills the
// whole worker process, not just the invocation.
const DefaultBudget = 4 * time.Minute

// Ticker is the part of the lifecycle this function drives
// (*lifecycle.Engine satisfies it).
type Ticker interface {
	Tick(ctx context.Context) (lifecycle.TickResult, error)
}

// Config tunes the function.
type Config struct {
	// Budget bounds one tick; 0 means DefaultBudget.
	Budget time.Duration
}

// Function adapts timer invocations to a Ticker.
type Function struct {
	ticker Ticker
	budget time.Duration
	logger *slog.Logger
	health tickHealth
}

// New builds the function; logger may be nil.
func New(t Ticker, cfg Config, logger *slog.Logger) *Function {
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	return &Function{ticker: t, budget: cfg.Budget, logger: logging.Logger(logger)}
}

// Register adds the function to the server under Name, and its report
// to the health route under HealthName.
func (f *Function) Register(s *handlers.Server) error {
	if err := s.Handle(Name, f.Invoke); err != nil {
		return err
	}
	return s.HealthCheck(HealthName, func() any { return f.Health() })
}

// Health is the timer's report for the health route.
func (f *Function) Health() Report { return f.health.report(time.Now()) }

// MsgTick names the telemetry record of a tick: the invocation's one line.
const MsgTick = "poll.tick"

// Outcomes of a tick, in the record's "outcome".
const (
	OutcomeOK     = "ok"
	OutcomeBudget = "budget_exhausted"
	OutcomeFailed = "failed"
)

// Invoke runs one tick. A tick cut short by its budget is not a failure:
// the work left over is still pending and the next tick takes it up. Any
// other tick error is a 500, visible as a failed run in the host. The
// tick's record is the Summary, the invocation's one log line; nothing
// goes in Logs, which the host would log a second time (and drops on
// failure).
func (f *Function) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	raw, ok := inv.Data[BindingName]
	if !ok {
		return handlers.Result{}, events.Malformed("Data.%s is missing; is the timerTrigger binding named %q?", BindingName, BindingName)
	}
	info, err := events.DecodeTimerInfo("Data."+BindingName, raw)
	if err != nil {
		return handlers.Result{}, err
	}
	if st := info.ScheduleStatus; st != nil {
		f.logger.DebugContext(ctx, "timer schedule status", "last", st.Last, "next", st.Next, "last_updated", st.LastUpdated)
	}

	start := time.Now() // before the budget's clock starts, so budget_used reaches 1
	f.health.begin(start)
	defer func() {
		if p := recover(); p != nil { // the server's recover answers it; the report must not say running
			f.health.end(time.Now(), OutcomeFailed, time.Since(start), f.budget)
			panic(p)
		}
	}()
	tickCtx, cancel := context.WithTimeout(ctx, f.budget)
	defer cancel()
	res, err := f.ticker.Tick(tickCtx)
	wall := time.Since(start)
	outcome, level := OutcomeOK, slog.LevelInfo
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && tickCtx.Err() != nil:
		outcome, level, err = OutcomeBudget, slog.LevelWarn, nil
	default:
		outcome = OutcomeFailed
	}
	f.health.end(start.Add(wall), outcome, wall, f.budget)
	out := handlers.Result{Summary: handlers.Summary{Msg: MsgTick, Level: level, Attrs: f.record(res, outcome, wall, info.IsPastDue)}}
	if err != nil {
		return out, fmt.Errorf("running poll tick: %w", err)
	}
	return out, nil
}

// record is the tick's telemetry; the keys are documented in
// docs/functions.md and held by a golden test.
func (f *Function) record(r lifecycle.TickResult, outcome string, wall time.Duration, pastDue bool) []slog.Attr {
	return append([]slog.Attr{
		slog.String("outcome", outcome),
		slog.Int("polled", r.Polled),
		slog.Int("changed", r.Changed),
		slog.Int("dispatched", r.Dispatched),
		slog.Int("expired", r.Expired),
		slog.Int("canceled", r.Canceled),
		slog.Int("notified", r.Notified),
		slog.Int("errors", r.Errors),
		slog.Int("backed_off", r.BackedOff),
		slog.Int("skipped", r.Skipped),
		slog.Any("skipped_reasons", skippedReasons(r)),
		slog.Int("versions_recorded", r.VersionsRecorded),
		slog.Float64("wall_ms", logging.Millis(wall)),
		slog.Float64("budget_ms", logging.Millis(f.budget)),
		slog.Float64("budget_used", float64(wall)/float64(f.budget)),
		slog.Bool("past_due", pastDue),
	}, r.CS.Attrs()...)
}

// skippedReasons is the tick's skips by reason, an object even when the
// ticker reported none.
func skippedReasons(r lifecycle.TickResult) map[string]int {
	if r.SkippedReasons == nil {
		return map[string]int{}
	}
	return r.SkippedReasons
}
