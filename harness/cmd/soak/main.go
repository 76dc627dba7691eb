// Command soak is `make soak`: the long fault-injection soak of a built
// hcpops binary. It lives outside hcpops itself because the soak links the
// Cosmos test-server harness, which has no place in the shipped binary.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hcpops/hcpops/harness/soak"
	"github.com/hcpops/hcpops/internal/cli"
)

func main() {
	cli.Main(os.LookupEnv, func(ctx context.Context, args []string) error {
		if err := soak.Main(ctx, args, os.Stdout); err != nil {
			return fmt.Errorf("soak: %w", err)
		}
		return nil
	})
}
