// Command hcpopsctl, built from here, is the operator's CLI: what an SRE
// runs against the Cosmos DB database the Function App serves, with the
// app's own settings (CosmosDB, or CosmosDB__accountEndpoint and
// azidentity; COSMOS_DATABASE). It holds the operator's commands
// (internal/operator) and nothing else; `make package` builds it beside
// the Function App's hcpops. The developer binary of the same name,
// built from harness/cmd/hcpopsctl into bin/, runs the same commands on
// the local store and adds dev, submit, the simulator and the tools. A
// test (deps_test.go) keeps the harness and bbolt out of what this links.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/hcpops/hcpops/core/appsettings"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/internal/cli"
	"github.com/hcpops/hcpops/internal/operator"
	"github.com/hcpops/hcpops/logging"
)

const prog = "hcpopsctl"

func main() {
	cli.Main(os.LookupEnv, func(ctx context.Context, args []string) error {
		return run(ctx, args, os.Getenv, os.Stdin, os.Stdout)
	})
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		usage(stdout)
		return &cli.Error{Cmd: prog, Err: errors.New("no command given")}
	}
	switch args[0] {
	case "help", "-h", "--help":
		usage(stdout)
		return nil
	}
	ok, err := operator.Run(ctx, cosmosEnv(getenv, stdin, stdout), args[0], args[1:])
	if !ok {
		usage(stdout)
		return &cli.Error{Cmd: prog, Err: fmt.Errorf("unknown command %q ('hcpopsctl -h' lists them; dev, submit and the "+
			"local tools are the developer binary's, built from harness/cmd/hcpopsctl)", args[0])}
	}
	return cli.Named(prog+" "+args[0], err)
}

// cosmosEnv runs the operator's commands on the Function App's database,
// judging operations with the settings the app recorded there.
func cosmosEnv(getenv func(string) string, stdin io.Reader, stdout io.Writer) operator.Env {
	return operator.Env{
		Prog: prog, Getenv: getenv, Stdin: stdin, Stdout: stdout,
		About: "the Function App's Cosmos DB database: " + cosmos.SettingConnectionString + ", or " + cosmos.SettingEndpoint +
			" with azidentity, and COSMOS_DATABASE, as the app has them",
		Connect: func(_ context.Context, _, _ bool) (store.Store, operator.Connection, error) {
			cfg, err := cosmos.ConfigFromEnv(getenv)
			if errors.Is(err, cosmos.ErrNotConfigured) {
				return nil, operator.Connection{}, fmt.Errorf("%w: set %s (or %s) and %s as the Function App has them",
					err, cosmos.SettingConnectionString, cosmos.SettingEndpoint, cosmos.SettingDatabase)
			}
			if err != nil {
				return nil, operator.Connection{}, fmt.Errorf("reading Cosmos DB settings: %w", err)
			}
			logger := slog.New(logging.Handler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
			s, err := cosmos.New(cfg, cosmos.WithLogger(logger))
			if err != nil {
				return nil, operator.Connection{}, fmt.Errorf("opening Cosmos DB: %w", err)
			}
			name := fmt.Sprintf("cosmos %s database %s", cfg.Endpoint, cfg.Database)
			conn := operator.Connection{Name: name, Server: "the Function App's poll timer on its next tick"}
			conn.LoadRecord = func(ctx context.Context) (*operator.Recorded, string) { return recorded(ctx, s) }
			return s, conn, nil
		},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\nThe operator's CLI, on the Function App's Cosmos DB database (its settings: %s,\nor %s with azidentity; COSMOS_DATABASE).\n\ncommands:\n",
		prog, cosmos.SettingConnectionString, cosmos.SettingEndpoint)
	for _, c := range operator.Commands {
		fmt.Fprintf(w, "  %-13s  %s\n", c.Name, c.About)
	}
	fmt.Fprintf(w, "\nhistory and top read a file of the handler's records (-log FILE); in Application Insights,\nthe history and tick queries of docs/operating.md. '%s <command> -h' prints a command's usage.\n", prog)
}

// recorded reads the settings the Function App recorded; nil, with why in
// words, when there are none to read.
func recorded(ctx context.Context, s *cosmos.Store) (*operator.Recorded, string) {
	leases, err := s.Leases()
	var rec appsettings.Record
	if err == nil {
		rec, err = appsettings.Load(ctx, leases)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, "the Function App has recorded none (" + appsettings.ID + " in the leases container: it records them when it starts)"
	case err != nil:
		return nil, "the Function App's record of them could not be read: " + err.Error()
	}
	return &operator.Recorded{Settings: rec.Settings, At: rec.RecordedAt, By: rec.RecordedBy}, ""
}
