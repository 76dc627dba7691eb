package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/clusterservice/simulator"
	devhost "github.com/hcpops/hcpops/devhost"
	"github.com/hcpops/hcpops/handlers"
)

// serve is what the Functions host starts (host.json arguments ["serve"]).
func serve(ctx context.Context, args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	port := fs.Int("port", handlers.DefaultPort, "port when FUNCTIONS_CUSTOMHANDLER_PORT is not set")
	format := fs.String("log-format", "json", "log format: json or text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := app.Logger(*format, slog.LevelInfo)
	p, err := handlers.PortFromEnv(getenv, *port)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, getenv, logger, app.Parts{})
	if err != nil {
		return err
	}
	defer a.Close()
	srv, err := a.Handler(getenv, handlers.Config{Port: p})
	if err != nil {
		return err
	}
	logger.Info("serving custom handler", "port", p, "store", a.StoreName)
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
	err = srv.Run(ctx)
	if cause := context.Cause(ctx); cause != nil && a.StoreErr() != nil {
		return fmt.Errorf("stopped serving: %w", cause)
	}
	if err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

func dev(ctx context.Context, args []string, stdout interface{ Write([]byte) (int, error) }) error {
	return devhost.Main(ctx, args, stdout)
}

func csSimulator(ctx context.Context, args []string) error {
	return simulator.Main(ctx, args)
}
