// Command hcpops, built from here, is what the Function App runs: host.json
// starts it as `hcpops serve`, and `make package` ships it. It holds the
// custom handler and nothing else; the developer commands (dev, submit,
// status, ops, history, doc, the simulator, bench) are in the binary built
// from the repository root (bin/hcpopsctl), which serves the same handler.
// A test (deps_test.go) keeps the harness out of what this links.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/internal/cli"
)

func main() {
	cli.Main(os.LookupEnv, func(ctx context.Context, args []string) error { return run(ctx, args, os.Getenv, os.Stdout) })
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		usage(stdout)
		return &cli.Error{Cmd: "hcpops", Err: errors.New("no command given")}
	}
	switch args[0] {
	case "help", "-h", "--help":
		usage(stdout)
		return nil
	case "serve":
		return cli.Named("hcpops serve", app.Serve(ctx, args[1:], getenv, stdout))
	}
	usage(stdout)
	return &cli.Error{Cmd: "hcpops", Err: fmt.Errorf("unknown command %q: the Function App's binary only serves; "+
		"the developer commands are in hcpopsctl, built from harness/cmd/hcpopsctl (make build: bin/hcpopsctl)", args[0])}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: hcpops serve [flags]

The Function App's build of hcpops: the Azure Functions custom handler,
listening on 127.0.0.1:$FUNCTIONS_CUSTOMHANDLER_PORT. Settings come from the
environment (docs/settings.md); 'hcpops serve -h' lists its flags.
`)
}
