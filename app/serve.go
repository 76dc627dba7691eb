package app

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/internal/cli"
	"github.com/hcpops/hcpops/logging"
)

// MsgHandlerStarted names the record serve writes as it starts: the
// Functions host starts the handler once per instance, so more starts than
// that mean it keeps restarting it (the restart alert counts them).
// Documented in docs/functions.md.
const MsgHandlerStarted = "handler.started"

// Serve is `hcpops serve`, what the Functions host starts (host.json
// arguments ["serve"]): it assembles the app from getenv, on Cosmos DB, and
// serves the custom handler until ctx ends.
func Serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return ServeWith(ctx, args, getenv, stdout, Local{})
}

// Local is what the developer binary adds to serve: its own store when no
// Cosmos DB is configured, and a way to share that store with its CLI.
type Local struct {
	// Command is serve as its binary names it ("hcpopsctl serve");
	// "" is the Function App's "hcpops serve".
	Command string
	// OpenStore replaces OpenCosmosStore when set.
	OpenStore OpenStoreFunc
	// Share publishes the app's store once the handler's port is held;
	// nil stop means there was nothing to share. stop runs closeApp and
	// then withdraws what it published, so no advert outlives the store.
	Share func(ctx context.Context, a *App) (stop func(closeApp func() error) error, err error)
}

// ServeWith is Serve with the developer binary's additions.
func ServeWith(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, local Local) error {
	name := local.Command
	if name == "" {
		name = "hcpops serve"
	}
	fs := cli.Command(name, "[flags]", "The Azure Functions custom handler. The Functions host starts it and sets\n"+
		handlers.EnvCustomHandlerPort+"; run by hand, it needs -port.")
	port := fs.Int("port", 0, "port to listen on when "+handlers.EnvCustomHandlerPort+" is not set")
	format := fs.String("log-format", "json", "log format: json or text")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", pos)
	}
	p, err := servePort(getenv, *port)
	if err != nil {
		return err
	}
	level, err := logging.ParseLevel(getenv(logging.EnvLevel))
	if err != nil {
		return err
	}
	logger := logging.New(*format, level)
	// Before the assembly, so that a handler the host keeps restarting
	// because its settings are wrong is counted too.
	logger.InfoContext(ctx, MsgHandlerStarted, "port", p, "pid", os.Getpid())
	a, err := New(ctx, getenv, logger, Parts{OpenStore: local.OpenStore})
	if err != nil {
		return err
	}
	// What was shared is withdrawn after the store has closed: no advert
	// means the CLI may open the file.
	var stop func(func() error) error
	defer func() {
		if stop != nil {
			_ = stop(a.Close)
			return
		}
		_ = a.Close()
	}()
	srv, err := a.Handler(handlers.Config{Port: p})
	if err != nil {
		return err
	}
	// The host's port before the store API's ephemeral one (Listen says why).
	ln, err := srv.Listen(ctx)
	if err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	defer ln.Close()
	if local.Share != nil {
		if stop, err = local.Share(ctx, a); err != nil {
			return err
		}
	}
	recorded := a.recordSettings(ctx)
	defer func() { <-recorded }() // before the store closes
	logger.InfoContext(ctx, "serving custom handler", "port", p, "store", a.StoreName)
	// A store that finds its file damaged fails every call from then on:
	// stop with its message (exit 1) rather than serve errors.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-a.StoreDamaged():
			cancel(a.StoreErr())
		case <-ctx.Done():
		}
	}()
	err = srv.Serve(ctx, ln)
	if cause := context.Cause(ctx); cause != nil && a.StoreErr() != nil {
		return fmt.Errorf("stopped serving: %w", cause)
	}
	if err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// servePort refuses to guess: without the host's port setting a port must
// be asked for, or a hand-started serve would quietly take one nobody calls.
func servePort(getenv func(string) string, flagPort int) (int, error) {
	p, err := handlers.PortFromEnv(getenv, flagPort)
	if err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, fmt.Errorf("serve: %s is not set: hcpops serve is normally started by the Azure Functions host "+
			"(func start, or the Function App), which sets it; to run it by hand pass -port PORT (or use 'hcpopsctl dev' for a local run)",
			handlers.EnvCustomHandlerPort)
	}
	return p, nil
}
