// Package csfake is Clusters Service for unit tests, in memory: the
// simulator's state machines (package simulator) on the test's clock,
// reached by the production client (package ocm) through an in-memory
// transport instead of a socket. A test gets a clusterservice.Client that
// answers as CS does in everything the simulator models (states, failures,
// faults, the request ledger), with no listener, no file and no real time:
// a request about a key the test hangs waits for its own context (a hang
// is <-ctx.Done()), which the client's timeout ends, on a synctest
// bubble's fake clock in the tests that meet one.
//
// Why not a second model of CS written against clusterservice's types: it
// would copy the simulator's state machines and the client's batching and
// list checks, and drift from both; this one is both, minus the network.
package csfake

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/harness/hang"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/simulator"
)

// URL is the base the clients name; nothing listens there, since every
// request is served in memory.
const URL = "http://clusters-service.invalid"

// CS is one fake Clusters Service for one test.
type CS struct {
	// Sim is the simulator behind it: its clock, durations, failures,
	// faults and ledger are the test's controls.
	Sim *simulator.Simulator
	// Hangs holds the requests about the keys a test names.
	Hangs *hang.Set
	// Client is a production client of it, as Config left it.
	Client *ocm.Client
	t      testing.TB

	mu    sync.Mutex
	front func(w http.ResponseWriter, r *http.Request) bool
}

// Front puts answer in front of the simulator, as a gateway or a fault
// proxy would stand: a request it answers (returns true) never reaches
// CS. nil takes it away.
func (f *CS) Front(answer func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.front = answer
}

func (f *CS) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	front := f.front
	f.mu.Unlock()
	if front != nil && front(w, r) {
		return
	}
	f.Sim.ServeHTTP(w, r)
}

// Config shapes the client New builds; zero values are a client without
// SDK retries, with a 10 s call timeout and no recorder.
type Config struct {
	RetryLimit    int
	RetryInterval time.Duration
	Timeout       time.Duration
	Recorder      *clusterservice.Recorder
}

// New runs a simulator built with opts behind an in-memory transport and
// returns it with a client; both are closed when the test ends.
func New(t testing.TB, cfg Config, opts ...simulator.Option) *CS {
	t.Helper()
	f := &CS{Sim: simulator.New(opts...), Hangs: hang.NewSet(), t: t}
	t.Cleanup(func() { f.Hangs.Release(); f.Sim.Close() })
	f.Client = f.NewClient(cfg)
	return f
}

// NewClient is another production client of the same fake, closed when
// the test ends.
func (f *CS) NewClient(cfg Config) *ocm.Client {
	f.t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = time.Millisecond
	}
	h := http.HandlerFunc(f.serve)
	c, err := ocm.New(context.Background(), ocm.Config{URL: URL, RetryLimit: cfg.RetryLimit, RetryInterval: cfg.RetryInterval,
		Timeout: cfg.Timeout, Recorder: cfg.Recorder, Transport: invoke.InMemory(f.Hangs.Handler(h))}, nil)
	if err != nil {
		f.t.Fatalf("clusters service client of the fake: %v", err)
	}
	f.t.Cleanup(func() { _ = c.Close() })
	return c
}
