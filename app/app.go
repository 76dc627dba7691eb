// Package app assembles hcpops from its settings: the document store
// (Cosmos DB; the developer binary supplies the embedded one through
// Parts.OpenStore), the Clusters Service client, the ARM notifier and the
// lifecycle engine, and the custom-handler server with every function
// registered. Both binaries share it, so `hcpops serve` and `hcpops-dev dev`
// run the same parts.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/hcpops/hcpops/auth"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/functions"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/logging"
)

// OpenStoreFunc opens the store New uses when none is supplied, and names
// it for messages.
type OpenStoreFunc func(ctx context.Context, getenv func(string) string, logger *slog.Logger) (store.Store, string, error)

// OpenCosmosStore is the Function App's store: Cosmos DB, always. Without
// a connection it refuses to start rather than keep documents where ARM's
// frontend never looks.
func OpenCosmosStore(_ context.Context, getenv func(string) string, logger *slog.Logger) (store.Store, string, error) {
	cfg, err := cosmosConfig(getenv)
	if err != nil {
		return nil, "", err
	}
	s, err := cosmos.New(cfg, cosmos.WithLogger(logger))
	if err != nil {
		return nil, "", fmt.Errorf("opening Cosmos DB store: %w", err)
	}
	return s, fmt.Sprintf("cosmos %s database %s", cfg.Endpoint, cfg.Database), nil
}

func cosmosConfig(getenv func(string) string) (cosmos.Config, error) {
	cfg, err := cosmos.ConfigFromEnv(getenv)
	switch {
	case errors.Is(err, cosmos.ErrNotConfigured):
		return cfg, fmt.Errorf("the Function App's handler runs on Cosmos DB and %s (or %s) is not set: "+
			"set it to the RP's database; a local run on the embedded store is the developer binary's (make run)",
			cosmos.SettingConnectionString, cosmos.SettingEndpoint)
	case err != nil:
		return cfg, fmt.Errorf("reading Cosmos DB settings: %w", err)
	}
	return cfg, nil
}

// App is the assembled backend.
type App struct {
	Store          store.Store
	StoreName      string
	ClusterService clusterservice.Client
	Engine         *lifecycle.Engine
	Reads          *armread.ReadService
	Logger         *slog.Logger

	// owned is what New opened itself, in opening order; Close releases
	// exactly these. Parts a caller supplied stay the caller's to close.
	owned []io.Closer
	clock clock.Clock
	set   settings
}

// Parts lets a caller (the local host, tests) supply pieces itself; nil
// fields are built from settings. New never closes a supplied part.
type Parts struct {
	Store store.Store
	// OpenStore opens the store when Store is nil: OpenCosmosStore when
	// nil too. The store it opens is New's to close.
	OpenStore      OpenStoreFunc
	ClusterService clusterservice.Client
	// Calls is what a supplied ClusterService records its requests into
	// (ocm.Config.Recorder); nil with a supplied client: nothing is
	// recorded, so no call counts, and a change-feed batch never sees
	// evidence that CS works.
	Calls    *clusterservice.Recorder
	Notifier lifecycle.Notifier
	Clock    clock.Clock
}

// New assembles the backend from settings. Close releases what it opened;
// when New fails it has released that already.
func New(ctx context.Context, getenv func(string) string, logger *slog.Logger, parts Parts) (_ *App, err error) {
	// Every setting is read before anything is opened or created, so a bad
	// one changes nothing on disk.
	set, err := readSettings(getenv, parts)
	if err != nil {
		return nil, err
	}
	a := &App{Store: parts.Store, ClusterService: parts.ClusterService, Logger: logger, StoreName: "supplied", set: set}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()
	if a.Store == nil {
		open := parts.OpenStore
		if open == nil {
			open = OpenCosmosStore
		}
		s, name, err := open(ctx, getenv, logger)
		if err != nil {
			return nil, err
		}
		a.Store, a.StoreName = s, name
		a.owned = append(a.owned, s)
	}
	clk := clock.OrReal(parts.Clock)
	a.clock = clk
	calls := parts.Calls
	if a.ClusterService == nil {
		calls = NewRecorder(clk)
		set.cs.Recorder = calls
		cs, err := ocm.New(ctx, set.cs, logger)
		if err != nil {
			return nil, fmt.Errorf("connecting to Clusters Service: %w", err)
		}
		a.ClusterService = cs
		a.owned = append(a.owned, cs)
	}
	notifier := parts.Notifier
	if notifier == nil {
		notifier = notification.New(set.notify, nil)
	}
	if calls == nil {
		calls = NewRecorder(clk)
	}
	eng, err := lifecycle.New(lifecycle.Deps{Store: a.Store, ClusterService: a.ClusterService, Calls: calls,
		Notifier: notifier, Clock: clk, Logger: logger}, set.lifecycle)
	if err != nil {
		return nil, fmt.Errorf("building the lifecycle engine: %w", err)
	}
	a.Engine = eng
	if a.Reads, err = armread.NewReadService(armread.ReadDeps{Store: a.Store, ClusterService: a.ClusterService, Logger: logger, Clock: clk},
		set.reads); err != nil {
		return nil, fmt.Errorf("building the read service: %w", err)
	}
	return a, nil
}

// NewRecorder is the Recorder a Clusters Service client of this app
// records into: on c, counting each request in the Functions invocation
// whose context made it.
func NewRecorder(c clock.Clock) *clusterservice.Recorder {
	return clusterservice.NewRecorder(c, logging.InvocationID)
}

// settings are every setting the app reads, parsed once, before anything
// is opened: the parts' (those of a supplied part are not read), the
// functions' and the caller check's.
type settings struct {
	functions functions.Config
	auth      auth.Policy
	cs        ocm.Config
	notify    notification.Config
	lifecycle lifecycle.Config
	reads     armread.ReadConfig
	// judging is what recordSettings records (lifecycle.Settings), and
	// instance the instance it names.
	judging  map[string]string
	instance string
}

// readSettings reads them all and names every bad one at once, so a
// deployment with three wrong settings is fixed in one round.
func readSettings(getenv func(string) string, parts Parts) (settings, error) {
	var (
		set  settings
		errs []error
	)
	read := func(err error, what string) {
		if err != nil && what != "" {
			err = fmt.Errorf("reading %s settings: %w", what, err)
		}
		errs = append(errs, err)
	}
	var err error
	set.functions, err = functions.ConfigFromEnv(getenv)
	read(err, "")
	set.auth, err = auth.FromEnv(getenv)
	read(err, "")
	if parts.ClusterService == nil {
		set.cs, err = ocm.ConfigFromEnv(getenv)
		read(err, "Clusters Service")
	}
	if parts.Notifier == nil {
		set.notify, err = notification.ConfigFromEnv(getenv)
		read(err, "")
	}
	// What the lifecycle reads is what recordSettings records: kept as
	// it is read, not parsed a second time (lifecycle.Settings).
	set.judging = map[string]string{}
	set.lifecycle, err = lifecycle.ConfigFromEnv(func(k string) string {
		set.judging[k] = getenv(k)
		return set.judging[k]
	})
	read(err, "")
	set.reads, err = armread.ReadConfigFromEnv(getenv)
	read(err, "")
	if parts.Store == nil && parts.OpenStore == nil {
		_, err = cosmosConfig(getenv)
		read(err, "")
	}
	set.instance = getenv(EnvInstance)
	return set, errors.Join(errs...)
}

// Handler builds the custom-handler server with every function
// registered, on the settings New read.
func (a *App) Handler(cfg handlers.Config) (*handlers.Server, error) {
	cfg.Auth = a.set.auth
	srv := handlers.New(cfg, a.Logger)
	if err := functions.Register(srv, backend{a.Engine, a.Reads}, a.set.functions, a.Logger); err != nil {
		return nil, fmt.Errorf("registering functions: %w", err)
	}
	return srv, nil
}

// backend is what the functions call: the engine's asynchronous work
// (dispatch, tick) and the read service's answers to ARM (status, result,
// gates), two separate parts.
type backend struct {
	*lifecycle.Engine
	*armread.ReadService
}

// StoreDamaged is closed when the store finds its file damaged (embedded
// store only; otherwise it never is), and StoreErr then says how. A server
// stops on it: every later call would fail, and a restart meets Open's
// refusal, which names the file and what to do.
func (a *App) StoreDamaged() <-chan struct{} {
	if d, ok := a.Store.(damageable); ok {
		return d.Damaged()
	}
	return nil
}

// StoreErr is the damage the store met, or nil.
func (a *App) StoreErr() error {
	if d, ok := a.Store.(damageable); ok {
		return d.Err()
	}
	return nil
}

type damageable interface {
	Damaged() <-chan struct{}
	Err() error
}

// Close releases what New opened (the store, the Clusters Service client),
// last opened first, and nothing a caller supplied. It is safe to call
// more than once.
func (a *App) Close() error {
	var errs []error
	for i := len(a.owned) - 1; i >= 0; i-- {
		errs = append(errs, a.owned[i].Close())
	}
	a.owned = nil
	return errors.Join(errs...)
}
