package soak

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/csfaults"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// Timings of the soak's own parts.
const (
	observeEvery   = 100 * time.Millisecond
	feedPollDelay  = 100 * time.Millisecond
	spikeEvery     = 3 * time.Second
	spikeFor       = time.Second
	goroutineGrace = 5 * time.Second
)

// run is one soak: assemble, play the plan, tear down, check, summarize.
func run(ctx context.Context, o options, stdout io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	began := time.Now()
	before := runtime.NumGoroutine()
	logw, logPath, closeLog, err := openLog(o)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ev, rep, err := execute(ctx, o, logger)
	closeLog()
	if err != nil {
		if logPath != "" {
			return fmt.Errorf("%w (logs: %s)", err, logPath)
		}
		return err
	}
	rep.seed, rep.took, rep.logPath = o.seed, time.Since(began), logPath
	after, leaked := settleGoroutines(before, goroutineGrace)
	rep.goroutines = [2]int{before, after}
	problems := ev.problems()
	if leaked != "" {
		problems = append(problems, fmt.Sprintf("goroutines: %d before the run, %d after it settled for %s:\n%s", before, after, goroutineGrace, leaked))
	}
	summarize(stdout, ev, rep, problems)
	if len(problems) > 0 {
		return fmt.Errorf("soak: %d invariants broken, first: %s", len(problems), problems[0])
	}
	return nil
}

func openLog(o options) (io.Writer, string, func(), error) {
	if o.logw != nil {
		return o.logw, "", func() {}, nil
	}
	var f *os.File
	var err error
	if o.logPath != "" {
		f, err = os.Create(o.logPath)
	} else {
		f, err = os.CreateTemp("", "hcpops-soak-*.log")
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("hcpops soak: opening the log: %w", err)
	}
	name := f.Name()
	return f, name, func() { _ = f.Close() }, nil
}

// execute assembles the system, plays the plan and gathers the evidence;
// every part it starts is stopped before it returns.
func execute(ctx context.Context, o options, logger *slog.Logger) (evidence, report, error) {
	var ev evidence
	var rep report
	root := o.scriptRoot
	if root == "" {
		r, err := moduleRoot()
		if err != nil {
			return ev, rep, err
		}
		root = r
	}
	endpoint := o.cosmosEndpoint
	if endpoint == "" {
		dir, err := cosmostest.ServerDir()
		if err == nil {
			err = cosmostest.Install(ctx, dir)
		}
		var srv *cosmostest.Server
		if err == nil {
			srv, err = cosmostest.StartServer(ctx, dir)
		}
		if err != nil {
			return ev, rep, fmt.Errorf("hcpops soak: the Cosmos test server (needs node >= 20 and npm): %w", err)
		}
		defer srv.Stop() //nolint:errcheck // best effort at the end of the run
		endpoint = srv.Endpoint
	}

	plan := makePlan(o.ops, o.duration, sickPlan{every: o.sickEvery, deadline: o.sickDeadline}, rand.New(rand.NewPCG(o.seed, 0)))

	// The store, through the proxy that counts its writes and disturbs
	// the handlers' requests.
	ledger := newWriteLedger()
	var faults *cosmosFaults
	if o.cosmosFaults {
		faults = newCosmosFaults(o.seed)
	}
	proxy, err := startCosmosProxy(endpoint, ledger, o.stripIfMatch, faults, logger)
	if err != nil {
		return ev, rep, err
	}
	defer proxy.Close()
	database := "hcpops-soak-" + uuid.NewString() // unique even for two runs with one seed on one server
	st, err := cosmos.New(cosmos.Config{Endpoint: proxy.url, Key: cosmostest.EmulatorKey, Database: database,
		InsecureLoopbackTLS: true, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: time.Second}, cosmos.WithLogger(logger))
	if err != nil {
		return ev, rep, err
	}
	defer st.Close()
	if err := st.EnsureContainers(ctx); err != nil {
		return ev, rep, fmt.Errorf("hcpops soak: creating database %s: %w", database, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := st.DropDatabase(dctx); err != nil {
			logger.WarnContext(ctx, "soak: dropping the database", "database", database, "error", err)
		}
	}()

	// Clusters Service, with the create ledger and the sick subset in front.
	sim := simulator.New(simulator.WithDurations(simDurations(o.phase)), simulator.WithRandSource(rand.NewPCG(o.seed, 1)),
		simulator.WithLogger(logger))
	defer sim.Close()
	ch := &chaos{sim: sim, hangRate: o.csHangRate, spikeEvery: spikeEvery, spikeFor: spikeFor, logger: logger, kills: killTimes(o.killCount(), o.duration)}
	if err := ch.arm(); err != nil {
		return ev, rep, err
	}
	csl := newCSLedger(sim)
	witness := newCSWitness(csl)
	sickDone := make(chan struct{})
	sick := newSickCS(witness, sickObjects(plan), sickDone)
	liar := newListLiar(sick, o.lyingEvery)
	windows := csfaults.New(liar)
	csURL, stopCS, err := serveLoopback(windows)
	if err != nil {
		return ev, rep, err
	}
	defer stopCS()
	defer close(sickDone) // before the server stops: hung requests return

	// The sink outlives an interrupt until the deferred Close, as before.
	sk, err := armsink.Start(context.WithoutCancel(ctx), armsink.Config{FailRate: o.notifyFailRate, Seed: o.seed})
	if err != nil {
		return ev, rep, err
	}
	defer sk.Close()

	// The trigger host, running the fleet of `hcpops serve` on the same store.
	app, err := loadApp(root, database)
	if err != nil {
		return ev, rep, err
	}
	stateDir, err := os.MkdirTemp("", "hcpops-soak-host-*")
	if err != nil {
		return ev, rep, fmt.Errorf("hcpops soak: %w", err)
	}
	defer os.RemoveAll(stateDir)
	env := handlerEnv(os.Environ(), handlerSettings(proxy.faultyURL, database, csURL))
	fl, err := newFleet(o.instances, func(i int) triggerhost.Worker {
		return handlerCommand(o.handler, root, env, logger.With("instance", i))
	}, timerFunctions(app), logger)
	if err != nil {
		return ev, rep, err
	}
	host, err := triggerhost.New(triggerhost.Config{
		App: app, Worker: fl, Feed: st, StateDir: stateDir,
		HTTPAddr: "127.0.0.1:0", FeedPollDelay: feedPollDelay, Logger: logger,
		FeedFaults: &triggerhost.FeedFaults{Duplicate: true, Reorder: o.feedReorder, Seed: o.seed},
	})
	if err != nil {
		return ev, rep, err
	}
	hostCtx, stopHost := context.WithCancel(ctx)
	hostDone := make(chan error, 1)
	go func() { hostDone <- host.Run(hostCtx) }()
	hostStopped := false
	stop := func() error {
		if hostStopped {
			return nil
		}
		hostStopped = true
		stopHost()
		return <-hostDone
	}
	defer stop() //nolint:errcheck // the error is taken on the normal path
	select {
	case <-host.Started():
	case err := <-hostDone:
		hostStopped = true
		return ev, rep, fmt.Errorf("hcpops soak: the trigger host stopped before it started: %w", err)
	case <-ctx.Done():
		return ev, rep, ctx.Err()
	}
	ch.handler = fl

	// Watch, disturb, play.
	obs := newObserver(st, observeEvery, logger)
	var bg sync.WaitGroup
	bgCtx, stopBG := context.WithCancel(ctx)
	defer func() { stopBG(); bg.Wait() }()
	bg.Go(func() { obs.run(bgCtx) })
	start := time.Now()
	bg.Go(func() { ch.run(bgCtx, start) })
	csw := csWindowsOf(o.duration, o.misroutedWindow, o.gatewayWindow)
	bg.Go(func() { runWindows(bgCtx, windows, csw, start, obs.deletesBesideAccepted, logger) })

	drv := &driver{fe: frontend.New(st, clock.Real{}, uuid.NewString), sim: sim, sink: sk, obs: obs, logger: logger,
		every: observeEvery, conflictPause: 200 * time.Millisecond, conflictBudget: time.Minute}
	runCtx, cancelRun := context.WithTimeout(ctx, o.duration+o.settle)
	defer cancelRun()
	logger.InfoContext(ctx, "soak: playing the plan", "scenarios", len(plan), "seed", o.seed)
	drv.run(runCtx, plan)
	settle(runCtx, obs)
	// ARM's status polls are the run's last check, with a budget of their
	// own: a settle that took the rest of the run's (notifications retried
	// on a loaded machine) left them none, and every poll not yet answered
	// read as a broken invariant.
	statusCtx, cancelStatus := context.WithTimeout(ctx, statusBudget)
	defer cancelStatus()
	status := pollStatuses(statusCtx, host.FrontURL(), drv.submissions())
	if ctx.Err() != nil {
		return ev, rep, fmt.Errorf("hcpops soak: interrupted: %w", context.Cause(ctx))
	}

	stopBG()
	bg.Wait()
	if err := stop(); err != nil {
		return ev, rep, fmt.Errorf("hcpops soak: the trigger host failed: %w", err)
	}
	if err := obs.drain(ctx); err != nil {
		return ev, rep, fmt.Errorf("hcpops soak: the last read of the change feed: %w", err)
	}
	writes := ledger.snapshot()
	finals, err := readFinals(ctx, st, writes)
	if err != nil {
		return ev, rep, err
	}
	ev.subs = drv.submissions()
	ev.versions, ev.ops, ev.uris = obs.snapshot()
	ev.writes, ev.finals, ev.cs, ev.status = writes, finals, csl.counts(), status
	ev.delivered = func(uri string) []arm.ProvisioningState { got, _ := sk.Delivered(uri); return got }
	ev.notifyAttempts, ev.notifyFailures = sk.Counts()
	ev.feed = host.FeedStats()
	ev.kills, rep.spikes = ch.counts()
	ev.starts, ev.instances = fl.Starts(), o.instances
	ev.ticks, ev.routed = fl.tickLog()
	ev.failedInvocations, ev.failedTook = fl.failedInvocations()
	ev.cosmosFaults, ev.wantCosmosFaults = faults.snapshot(), o.cosmosFaults
	ev.sickHung, ev.sickGarbled = sick.sickCounts()
	ev.idSearches, ev.lyingLists = liar.counts()
	ev.wantLies = o.lyingEvery > 0
	ev.windows, ev.windowAnswered, ev.absent = csw, windowAnswers(windows), witness.snapshot()
	ev.csWords = witness.wordsSnapshot()
	if ev.csObjects, err = csObjectsOf(sim); err != nil {
		return ev, rep, err
	}
	ev.sick = sickObjects(plan)
	ev.wantCSHangs = o.csHangRate > 0
	l := sim.Ledger()
	for _, n := range l.Faults {
		rep.simFaults += n
	}
	ev.simPosts = map[string]int{
		"cluster":      l.Count(http.MethodPost, simClusterCreate),
		"nodepool":     l.Count(http.MethodPost, simNodePoolCreate),
		"externalauth": l.Count(http.MethodPost, simExternalAuthCreate),
	}
	rep.writes[writeCreate], rep.writes[writeReplace], rep.writes[writeDelete] = ledger.counts()
	return ev, rep, nil
}

// serveLoopback serves h on a free 127.0.0.1 port.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("hcpops soak: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
