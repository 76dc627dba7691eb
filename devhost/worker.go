package devhost

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/devhost/triggerhost"
	dispatchoperations "github.com/hcpops/hcpops/functions/dispatchOperations"
	operationstatus "github.com/hcpops/hcpops/functions/operationStatus"
	polloperations "github.com/hcpops/hcpops/functions/pollOperations"
	"github.com/hcpops/hcpops/handlers"
)

// handlerShutdown bounds a handler restart: in-flight invocations get this
// long before they are cut off, as a killed process would cut them.
const handlerShutdown = 2 * time.Second

// inProcessHandler runs the project's custom handler inside this process,
// because the embedded store's bbolt file has a single owner: the trigger
// host reads its change feed and the handler writes it. Every Run builds a
// fresh server on the shared engine, so a restart is a real stop and start
// of the HTTP server on the same port.
func inProcessHandler(engine *lifecycle.Engine, poll polloperations.Config, logger *slog.Logger) triggerhost.Worker {
	return triggerhost.WorkerFunc(func(ctx context.Context, port int) error {
		srv := handlers.New(handlers.Config{Port: port, ShutdownTimeout: handlerShutdown}, logger)
		registrations := []struct {
			name     string
			register func(*handlers.Server) error
		}{
			{dispatchoperations.Name, dispatchoperations.New(engine, logger).Register},
			{polloperations.Name, polloperations.New(engine, poll, logger).Register},
			{operationstatus.Name, operationstatus.New(engine, logger).Register},
		}
		for _, r := range registrations {
			if err := r.register(srv); err != nil {
				return fmt.Errorf("registering %s: %w", r.name, err)
			}
		}
		return srv.Run(ctx)
	})
}
