// Package functions puts every Azure Function of the app on one custom
// handler server: the lifecycle's entry points. dispatchOperations takes
// the change feed's new operations to Clusters Service, pollOperations
// runs the timer's tick (poll, safety-net dispatch, expiry, notification),
// and operationStatus and operationResults answer ARM's polls. Each
// function lives in the folder named after it, with its function.json
// next to its Go adapter; the folder name is the path the host posts to.
package functions

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	dispatchoperations "github.com/hcpops/hcpops/functions/dispatchOperations"
	operationresults "github.com/hcpops/hcpops/functions/operationResults"
	operationstatus "github.com/hcpops/hcpops/functions/operationStatus"
	polloperations "github.com/hcpops/hcpops/functions/pollOperations"
	"github.com/hcpops/hcpops/handlers"
)

// Backend is everything the functions call: *lifecycle.Engine's dispatch
// and tick, *armread.ReadService's status, result and gates (app's backend
// joins the two). Named apart from lifecycle.Engine, which is one half.
type Backend interface {
	dispatchoperations.Dispatcher
	polloperations.Ticker
	operationstatus.StatusReader
	operationresults.ResultReader
}

// EnvPollBudget overrides the poll tick budget (a Go duration, e.g. "4m").
// Keep it below host.json's functionTimeout.
const EnvPollBudget = "HCPOPS_POLL_BUDGET"

// Config tunes the functions.
type Config struct {
	// PollBudget bounds one poll tick; 0 means polloperations.DefaultBudget.
	PollBudget time.Duration
}

// ConfigFromEnv reads the settings above through getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var cfg Config
	if v := strings.TrimSpace(getenv(EnvPollBudget)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s=%q: want a positive duration such as 4m", EnvPollBudget, v)
		}
		cfg.PollBudget = d
	}
	return cfg, nil
}

// Register adds every function to s.
func Register(s *handlers.Server, eng Backend, cfg Config, logger *slog.Logger) error {
	if eng == nil {
		return fmt.Errorf("registering functions: nil backend")
	}
	regs := []interface{ Register(*handlers.Server) error }{
		dispatchoperations.New(eng, logger),
		polloperations.New(eng, polloperations.Config{Budget: cfg.PollBudget}, logger),
		operationstatus.New(eng, logger),
		operationresults.New(eng, logger),
	}
	for _, r := range regs {
		if err := r.Register(s); err != nil {
			return fmt.Errorf("registering functions: %w", err)
		}
	}
	return nil
}
