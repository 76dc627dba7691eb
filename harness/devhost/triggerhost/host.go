// Package triggerhost is a local stand-in for the Azure Functions host
// toward a custom handler: it reads the app's function.json files, fires
// timers on their NCRONTAB schedules, pumps a document store's change feed
// into cosmosDBTrigger functions and forwards HTTP routes, speaking only
// HTTP on 127.0.0.1 with the payloads, headers, retry and checkpoint
// behaviour of the real host.
package triggerhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// Config assembles a host.
type Config struct {
	App *functionapp.App
	// Worker runs the custom handler; the host supervises it on HandlerPort
	// (0: a free port).
	Worker      Worker
	HandlerPort int
	// Feed serves cosmosDBTrigger functions; required when there are any.
	Feed Feed
	// StateDir keeps timer status across restarts, and leases when Leases
	// is nil.
	StateDir string
	// Leases keeps the change-feed leases; nil keeps them in StateDir.
	Leases LeaseStore
	// Owner names this host in the leases it holds; a lease another owner
	// renewed recently is refused. Empty means host name and pid.
	Owner string
	// HTTPAddr is the front door for forwarded HTTP functions, on
	// 127.0.0.1 (":7071" means 127.0.0.1:7071; port 0 picks one). Empty
	// serves no HTTP.
	HTTPAddr string
	// FeedPollDelay overrides every cosmosDBTrigger's feedPollDelay when set.
	FeedPollDelay time.Duration
	// FeedFaults, when set, makes change-feed delivery harsher than the
	// real host's; soak tests use it. Nil delivers as the host does.
	FeedFaults *FeedFaults
	// Location is the host's time zone for schedules and TimerInfo times;
	// nil means UTC, as on Azure.
	Location    *time.Location
	Clock       clock.Clock
	HostVersion string
	Logger      *slog.Logger
}

// Host runs the triggers of one app against one handler.
type Host struct {
	app      *functionapp.App
	sup      *Supervisor
	endpoint Endpoint
	invoker  *Invoker
	feed     Feed
	state    stateDir
	leases   LeaseStore
	owner    string
	// leaseRenew and leaseExpiration are the trigger's lease timings.
	leaseRenew, leaseExpiration time.Duration
	clock                       clock.Clock
	location                    *time.Location
	logger                      *slog.Logger
	httpAddr                    string

	timers []*timerListener
	feeds  []*feedListener
	routes []route
	faults *FeedFaults
	stats  feedCounters

	mu       sync.Mutex
	frontURL string
	ran      bool
	started  chan struct{}
}

// New checks the app against what this host can run and prepares it;
// nothing starts before Run.
func New(cfg Config) (*Host, error) {
	if cfg.App == nil {
		return nil, errors.New("trigger host: no app")
	}
	if cfg.StateDir == "" {
		return nil, errors.New("trigger host: StateDir is required (leases and timer status live there)")
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.HostVersion == "" {
		cfg.HostVersion = DefaultHostVersion
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.FeedFaults.validate(); err != nil {
		return nil, err
	}
	if cfg.Leases == nil {
		cfg.Leases = fileLeases{dir: stateDir(cfg.StateDir)}
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		cfg.Owner = fmt.Sprintf("%s pid %d", host, os.Getpid())
	}
	sup, err := NewSupervisor(cfg.Worker, cfg.HandlerPort, cfg.Logger)
	if err != nil {
		return nil, err
	}
	h := &Host{
		app: cfg.App, sup: sup, endpoint: sup, feed: cfg.Feed, state: stateDir(cfg.StateDir),
		leases: cfg.Leases, owner: cfg.Owner,
		leaseRenew: DefaultLeaseRenewInterval, leaseExpiration: DefaultLeaseExpirationInterval,
		clock: cfg.Clock, location: cfg.Location, logger: cfg.Logger, started: make(chan struct{}),
		faults: cfg.FeedFaults,
	}
	timeout := time.Duration(0)
	if ft := cfg.App.Host.FunctionTimeout; ft > 0 {
		timeout = ft + time.Minute // the host's HTTP client allows a minute over functionTimeout
	}
	h.invoker = newInvoker(sup, cfg.Clock, cfg.HostVersion, timeout, cfg.Logger)
	if err := h.plan(cfg); err != nil {
		return nil, err
	}
	if cfg.HTTPAddr != "" {
		addr, err := loopback(cfg.HTTPAddr)
		if err != nil {
			return nil, err
		}
		h.httpAddr = addr
	}
	return h, nil
}

// plan builds a listener per function; anything it cannot serve is an error
// naming the function, except triggers it does not know, which are skipped
// with a warning as a partial local run is still useful.
func (h *Host) plan(cfg Config) error {
	forwarding := cfg.App.Host.CustomHandler != nil && cfg.App.Host.CustomHandler.EnableForwardingHTTPRequest
	for _, fn := range cfg.App.Functions {
		b := fn.Trigger()
		switch b.Type {
		case functionapp.TypeTimerTrigger:
			sched, err := parseSchedule(b.Schedule, cfg.Location)
			if err != nil {
				return fmt.Errorf("function %s: binding %q: %w", fn.Name, b.Name, err)
			}
			h.timers = append(h.timers, &timerListener{host: h, fn: fn, binding: b, schedule: sched,
				monitor: b.UseMonitor && !sched.subMinute})
		case functionapp.TypeCosmosDBTrigger:
			if cfg.Feed == nil {
				return fmt.Errorf("function %s: a cosmosDBTrigger needs a change feed, and none was given", fn.Name)
			}
			delay := b.FeedPollDelay
			if cfg.FeedPollDelay > 0 {
				delay = cfg.FeedPollDelay
			}
			h.feeds = append(h.feeds, &feedListener{host: h, fn: fn, binding: b, pollDelay: delay,
				reader:    changefeed.NewReader(cfg.Feed, changefeed.WithPageSize(b.MaxItemsPerInvocation), changefeed.WithClock(cfg.Clock)),
				leaseName: b.LeaseContainerPrefix + fn.Name, rng: cfg.FeedFaults.rand(len(h.feeds))})
		case functionapp.TypeHTTPTrigger:
			r, err := parseRoute(fn, cfg.App.Host.RoutePrefix)
			if err != nil {
				return err
			}
			r.forward = forwarding && fn.IsHTTPOnly()
			h.routes = append(h.routes, r)
		default:
			h.logger.Warn("skipping function with a trigger this host does not run", "function", fn.Name, "type", b.Type)
		}
	}
	return nil
}

func loopback(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("HTTP address %q: want host:port: %w", addr, err)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("HTTP address %q: this host listens on loopback only", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// Supervisor is the handler's supervisor, for restarting it.
func (h *Host) Supervisor() *Supervisor { return h.sup }

// Started is closed once the front door listens and every trigger runs.
func (h *Host) Started() <-chan struct{} { return h.started }

// FrontURL is the base URL of the HTTP front door once Started.
func (h *Host) FrontURL() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.frontURL
}

// Run starts the handler, waits for it to answer, then runs every trigger
// until ctx is done. It returns the first error that stopped a trigger.
func (h *Host) Run(ctx context.Context) error {
	h.mu.Lock()
	ran := h.ran
	h.ran = true
	h.mu.Unlock()
	if ran {
		return errors.New("trigger host: Run may be called once; build a new Host to run again")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel(err)
	}
	result := func() error {
		errMu.Lock()
		defer errMu.Unlock()
		return firstErr
	}
	wg.Go(func() {
		if err := h.sup.Run(ctx); err != nil {
			fail(err)
		}
	})
	defer wg.Wait()

	var srv *http.Server
	if h.httpAddr != "" {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", h.httpAddr)
		if err != nil {
			cancel(nil)
			return fmt.Errorf("listening for HTTP functions on %s: %w", h.httpAddr, err)
		}
		h.mu.Lock()
		h.frontURL = "http://" + ln.Addr().String()
		h.mu.Unlock()
		srv = &http.Server{Handler: newForwarder(h, h.routes, ln.Addr()), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(h.logger.Handler(), slog.LevelWarn)}
		wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				fail(fmt.Errorf("serving HTTP functions: %w", err))
			}
		})
		h.logger.LogAttrs(ctx, slog.LevelInfo, "HTTP functions listening", slog.String("url", h.FrontURL()), slog.Int("routes", len(h.routes)))
	}

	if err := h.sup.Ready(ctx); err != nil {
		cancel(nil)
		h.shutdown(srv)
		wg.Wait()
		return result()
	}
	for _, t := range h.timers {
		wg.Go(func() {
			if err := t.run(ctx); err != nil {
				fail(err)
			}
		})
	}
	// Feed positions are fixed before Started, so whatever is written
	// after Started is delivered.
	for _, f := range h.feeds {
		cont, err := f.startPosition(ctx)
		if err != nil {
			fail(err)
			break
		}
		wg.Go(func() {
			if err := f.run(ctx, cont); err != nil {
				fail(err)
			}
		})
	}
	close(h.started)
	<-ctx.Done()
	h.shutdown(srv)
	wg.Wait()
	return result()
}

func (h *Host) shutdown(srv *http.Server) {
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}
