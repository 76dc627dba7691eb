package benchmark

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/hcpops/hcpops/core/store/cosmos"
	testserver "github.com/hcpops/hcpops/harness/cosmosserver"
)

// cosmosWorld is the local Cosmos-compatible test server (node, installed
// by npm on first use) with one fresh database for a scenario. The server
// is slow, so its scenario reports round trips, not time.
type cosmosWorld struct {
	srv *testserver.Server
	cfg cosmos.Config
}

func newCosmosWorld(ctx context.Context) (*cosmosWorld, error) {
	dir, err := testserver.Dir()
	if err != nil {
		return nil, err
	}
	if err := testserver.Install(ctx, dir); err != nil {
		return nil, err
	}
	srv, err := testserver.Start(ctx, dir)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("naming the bench database: %w", err)
	}
	w := &cosmosWorld{srv: srv, cfg: cosmos.Config{
		Endpoint: srv.Endpoint, Key: testserver.EmulatorKey, Database: "bench-" + hex.EncodeToString(b[:]),
		InsecureLoopbackTLS: true, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: time.Second,
	}}
	s, err := w.open()
	if err == nil {
		err = s.EnsureContainers(ctx)
		_ = s.Close()
	}
	if err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("preparing the bench database: %w", err)
	}
	return w, nil
}

func (w *cosmosWorld) open(opts ...cosmos.Option) (*cosmos.Store, error) {
	s, err := cosmos.New(w.cfg, append([]cosmos.Option{cosmos.WithLogger(discardLogger())}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("opening the Cosmos store: %w", err)
	}
	return s, nil
}

func (w *cosmosWorld) close() {
	if err := w.srv.Stop(); err != nil {
		fmt.Println("bench:", err)
	}
}

// requestCounter counts the Cosmos store's HTTP attempts.
type requestCounter struct{ n atomic.Int64 }

func (c *requestCounter) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}
