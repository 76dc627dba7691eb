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
	"github.com/hcpops/hcpops/handlers"
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
}

// New builds the function; logger may be nil.
func New(t Ticker, cfg Config, logger *slog.Logger) *Function {
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	return &Function{ticker: t, budget: cfg.Budget, logger: handlers.Logger(logger)}
}

// Register adds the function to the server under Name.
func (f *Function) Register(s *handlers.Server) error {
	return s.Handle(Name, f.Invoke)
}

// Invoke runs one tick. A tick cut short by its budget is not a failure:
// the work left over is still pending and the next tick takes it up. Any
// other tick error is a 500, visible as a failed run in the host.
func (f *Function) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	raw, ok := inv.Data[BindingName]
	if !ok {
		return handlers.Result{}, handlers.BadInput("Data.%s is missing; is the timerTrigger binding named %q?", BindingName, BindingName)
	}
	info, err := DecodeTimerInfo(raw)
	if err != nil {
		return handlers.Result{}, err
	}
	var logs []string
	if info.IsPastDue {
		logs = append(logs, "timer is past due: catching up a missed occurrence")
	}
	if st := info.ScheduleStatus; st != nil {
		f.logger.DebugContext(ctx, "timer schedule status", "last", st.Last, "next", st.Next, "last_updated", st.LastUpdated)
	}

	tickCtx, cancel := context.WithTimeout(ctx, f.budget)
	defer cancel()
	res, err := f.ticker.Tick(tickCtx)
	summary := "tick: " + res.String()
	switch {
	case err == nil:
		logs = append(logs, summary)
		f.logger.InfoContext(ctx, summary, "past_due", info.IsPastDue)
		return handlers.Result{Logs: logs}, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && tickCtx.Err() != nil:
		msg := fmt.Sprintf("tick stopped at its budget of %s; the next tick continues (%s)", f.budget, res.String())
		logs = append(logs, msg)
		f.logger.WarnContext(ctx, msg)
		return handlers.Result{Logs: logs}, nil
	default:
		logs = append(logs, "tick failed; "+summary)
		return handlers.Result{Logs: logs}, fmt.Errorf("running poll tick: %w", err)
	}
}
