package devhost

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

// handlerShutdown bounds a handler restart: in-flight invocations get this
// long before they are cut off, as a killed process would cut them.
const handlerShutdown = 2 * time.Second

// handlerWorker runs the project's custom handler inside this process,
// because the embedded store's bbolt file has a single owner: the trigger
// host reads its change feed and the handler writes it. Every Run builds
// the server the way serve does (app.Handler, so functions.Register), on
// the shared engine, so a restart is a real stop and start of the HTTP
// server on the same port.
func handlerWorker(a *app.App, getenv func(string) string) triggerhost.Worker {
	return triggerhost.WorkerFunc(func(ctx context.Context, port int) error {
		srv, err := a.Handler(handlers.Config{Port: port, ShutdownTimeout: handlerShutdown})
		if err != nil {
			return err
		}
		return srv.Run(ctx)
	})
}
