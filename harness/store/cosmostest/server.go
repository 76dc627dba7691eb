// Package cosmostest runs the local Cosmos-compatible test server
// (tools/cosmos-test-server) for tests, one per test binary, and hands out
// stores on fresh databases of it.
package cosmostest

import (
	"context"

	testserver "github.com/hcpops/hcpops/harness/cosmosserver"
)

// EmulatorKey is the Cosmos DB emulator's published, well-known key.
const EmulatorKey = testserver.EmulatorKey

// Server is one running test server process.
type Server = testserver.Server

// ServerDir finds tools/cosmos-test-server above the working directory.
func ServerDir() (string, error) { return testserver.Dir() }

// Install runs npm ci in dir unless the pinned package is already there.
func Install(ctx context.Context, dir string) error { return testserver.Install(ctx, dir) }

// StartServer starts the wrapper in dir on a free loopback port.
func StartServer(ctx context.Context, dir string) (*Server, error) { return testserver.Start(ctx, dir) }

// Options choose how a server of one's own listens (StartOwn).
type Options = testserver.Options
