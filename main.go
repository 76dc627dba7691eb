// Command hcpops is the asynchronous-operation backend of an ARO-HCP-style
// resource provider, run as an Azure Functions custom handler.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hcpops:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "help", "-h", "--help":
		return usage()
	default:
		return fmt.Errorf("unknown command %q (try 'hcpops help')", args[0])
	}
}

func usage() error {
	fmt.Println(`usage: hcpops <command> [flags]

commands:
  serve          run the Azure Functions custom handler (FUNCTIONS_CUSTOMHANDLER_PORT)
  dev            run the whole lifecycle locally (embedded store, CS simulator, trigger host)
  cs-simulator   run the Clusters Service simulator
  submit         write an operation the way the ARO-HCP frontend does
  status         print an operation's ARM status body
  doc            get, put or list raw documents in the configured store`)
	return nil
}
