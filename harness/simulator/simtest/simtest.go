// Package simtest starts the Clusters Service simulator for other packages'
// tests: on loopback, on a free port, stopped when the test ends.
package simtest

import (
	"context"
	"testing"

	"github.com/hcpops/hcpops/harness/simulator"
)

// Start runs a simulator built with opts on 127.0.0.1 and returns it with
// its base URL. Cleanup closes it after anything the test registers later
// (an app, a client), since cleanups run last-in first-out.
func Start(t testing.TB, opts ...simulator.Option) (*simulator.Simulator, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sim := simulator.New(opts...)
	t.Cleanup(func() { sim.Close(); cancel() })
	url, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting simulator: %v", err)
	}
	return sim, url
}
