package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/harness/benchmark"
	devhost "github.com/hcpops/hcpops/harness/devhost"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/internal/cli"
	"github.com/hcpops/hcpops/internal/operator"
)

// prog is the developer binary's name, so its messages are told apart
// from the Function App's hcpops.
const prog = "hcpopsctl"

func main() {
	cli.Main(os.LookupEnv, func(ctx context.Context, args []string) error { return run(ctx, args, os.Getenv, os.Stdin, os.Stdout) })
}

// run dispatches a subcommand; the environment and streams are injected so
// the commands are testable in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		usage(stdout)
		return &cli.Error{Cmd: prog, Err: errors.New("no command given")}
	}
	return cli.Named(prog+" "+args[0], runCommand(ctx, args[0], args[1:], getenv, stdin, stdout))
}

func runCommand(ctx context.Context, cmd string, rest []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	switch cmd {
	case "help", "-h", "--help":
		usage(stdout)
		return nil
	case "serve":
		local := localstore.Serving(getenv)
		local.Command = prog + " serve"
		return app.ServeWith(ctx, rest, getenv, stdout, local)
	case "dev":
		return devhost.Main(ctx, rest, stdout)
	case "cs-simulator":
		return simulator.Main(ctx, rest, stdout)
	case "submit":
		return submit(ctx, rest, getenv, stdout)
	case "status", "doc", "ops", "history", "top":
		// The operator's commands, as the shipped hcpopsctl has them, on
		// the local store.
		_, err := operator.Run(ctx, localEnv(getenv, stdin, stdout), cmd, rest)
		return err
	case "bench":
		// make bench. Its scenarios re-run this binary as children.
		return benchmark.Main(ctx, rest, stdout)
	case "sink":
		return sink(ctx, rest, getenv, stdout)
	default:
		usage(stdout)
		return &cli.Error{Cmd: prog, Err: fmt.Errorf("unknown command %q ('hcpopsctl -h' lists them)", cmd)}
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: hcpopsctl <command> [flags]

commands:
  serve          run the Azure Functions custom handler on 127.0.0.1:$FUNCTIONS_CUSTOMHANDLER_PORT
                 (the Function App's binary, built from cmd/hcpops, has this command alone)
  dev            run the whole lifecycle locally: embedded store, CS simulator, trigger host (make run)
  cs-simulator   run the Clusters Service simulator (--listen 127.0.0.1:PORT)
  submit         write an operation and its resource the way the ARO-HCP frontend does
  sink           read or steer dev's ARM notification sink: ok, refuse, hang, fail N
  status         print an operation's ARM status body
  ops            list operations as a table: what is active, what failed and why
  ops fail       end an active operation by hand: Failed, OperationAbandoned (docs/runbooks.md)
  ops cancel     the same, Canceled
  history        print an operation's transitions with times and durations, from the process's log
  top            the poll timer's last ticks and what they saw active, refreshed live
  doc            get, put or list raw documents in the configured store
  bench          measure poll ticks and dispatch at scale (make bench; docs/testing.md)

Settings come from the environment (docs/settings.md); 'hcpopsctl <command> -h' prints a command's usage.
`)
}
