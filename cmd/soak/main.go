// Command soak is `make soak`: the long fault-injection soak of a built
// hcpops binary. It lives outside hcpops itself because the soak links the
// Cosmos test-server harness, which has no place in the shipped binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hcpops/hcpops/soak"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := soak.Main(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}
