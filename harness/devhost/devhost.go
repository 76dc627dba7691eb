// Package devhost is `hcpopsctl dev`: the whole operation lifecycle on one
// machine. It runs the embedded store (or the Cosmos DB database the
// settings name, reading its change feed as the Functions trigger does,
// with leases in its leases container), the Clusters Service simulator, a
// notification sink, the custom handler (in process) and a local trigger
// host that speaks the Functions protocol to it over loopback HTTP, then
// submits sample operations the way ARM's frontend would and shows them
// move to their terminal states.
package devhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/functions"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/storeapi"
	"github.com/hcpops/hcpops/logging"
)

// Caller identity the sample requests carry (ARM's X-Ms-Home-Tenant-Id and
// X-Ms-Client-Object-Id); made up, like everything a local run submits.
const (
	devTenantID = "6d6f636b-0000-4000-8000-000000000001"
	devClientID = "6d6f636b-0000-4000-8000-000000000002"
)

// devSettings fill app settings a local run needs when neither the
// environment nor local.settings.json has them.
// HCPOPS_AUTH=none: no App Service Authentication runs in front of a
// laptop, so the status route takes any caller (with a warning at start).
// COSMOS_DATABASE only resolves function.json's %COSMOS_DATABASE% on the
// embedded store: on Cosmos DB the user's own is required.
func devSettings() map[string]string {
	return map[string]string{"COSMOS_DATABASE": "hcpops", "HCPOPS_AUTH": "none"}
}

// LogFile is where a run's logs go in the data dir: appended across runs,
// rotated by size (devlog), and copied to stderr with -v.
const LogFile = devlog.File

var errTimeout = errors.New("timed out")

// Main runs `hcpopsctl dev`; args are the flags after "dev". Progress and the
// tables go to stdout, logs to the data dir's dev.log (stderr with -v). It
// returns when ctx is done, or with -exit-when-done once the samples have
// finished.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args, os.LookupEnv, stdout)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	o.logPath = filepath.Join(o.dataDir, LogFile)
	return run(ctx, o, stdout, os.Stderr, functionapp.EnvironMap(os.Environ()))
}

// run checks every setting before it touches the disk, then opens the data
// dir (refusing one another process holds), starts the parts and the
// samples. Logs go to logw, or to o.logPath when set.
func run(ctx context.Context, o options, stdout, logw io.Writer, env map[string]string) error {
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errTimeout)
		defer cancel()
	}
	defer stopped(ctx, o, stdout)
	local, err := functionapp.LocalSettings(o.scriptRoot)
	if err != nil {
		return err
	}
	settings := functionapp.Settings(env, local, devSettings())
	getenv := func(k string) string { v, _ := settings(k); return v }
	userSettings := functionapp.Settings(env, local)
	cfg, onCosmos, err := cosmosSettings(func(k string) string { v, _ := userSettings(k); return v })
	if err != nil {
		return err
	}
	fa, err := functionapp.Load(o.scriptRoot, settings)
	if err != nil {
		return err
	}
	if err := overrideSchedules(fa, o.schedules); err != nil {
		return err
	}
	if onCosmos {
		if err := checkCosmosRun(o, cfg, fa); err != nil {
			return err
		}
	}
	ncfg, err := checkSettings(getenv)
	if err != nil {
		return err
	}
	if err := refuseHeld(ctx, o.dataDir); err != nil {
		return err
	}
	stateDir, err := prepareDataDir(o.dataDir, o.reset, !onCosmos)
	if err != nil {
		return err
	}
	if o.logPath != "" {
		w, path, err := devlog.Open(filepath.Dir(o.logPath), 0)
		if err != nil {
			return err
		}
		defer w.Close()
		o.logPath = path
		if o.verbose {
			logw = io.MultiWriter(w, logw)
		} else {
			logw = w
		}
	}
	// Warnings and errors also reach the terminal, under their operation.
	ev := &events{}
	logger := slog.New(ev.handler(logging.Handler(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: o.logLevel}))))
	st, err := openStore(ctx, o, cfg, onCosmos, logger)
	if err != nil {
		return err
	}
	// The store closes last, after the host has stopped, and the advert
	// goes only after it: no advert means the CLI may open the file.
	var shared *storeapi.Shared
	defer func() {
		if shared != nil {
			_ = shared.CloseAfter(st.Close)
			return
		}
		_ = st.Close()
	}()

	durations, _ := o.durations()
	sim := simulator.New(simulator.WithDurations(durations), simulator.WithLogger(logger))
	defer sim.Close()
	simCtx, stopSim := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSim()
	// The simulator's objects outlive the run, as CS's do: a restart
	// finishes what was in flight.
	simState := filepath.Join(o.dataDir, simulator.SnapshotFile)
	restored, err := sim.LoadSnapshot(simState)
	if err != nil {
		return err
	}
	persisted := sim.Persist(simCtx, simState, time.Second, func(err error) {
		logger.WarnContext(ctx, "saving the CS simulator's state failed", "path", simState, "error", err)
	})
	defer func() { stopSim(); <-persisted }() // after the host: its last CS calls are kept
	simURL, err := sim.Start(simCtx, o.csAddr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("starting the Clusters Service simulator: %w; another hcpopsctl dev may hold it: stop it, or pass -cs-addr 127.0.0.1:PORT", err)
	}
	if err != nil {
		return fmt.Errorf("starting the Clusters Service simulator: %w", err)
	}
	calls := app.NewRecorder(clock.Real{})
	cs, err := ocm.New(ctx, ocm.Config{URL: simURL, RetryLimit: 2, RetryInterval: 100 * time.Millisecond, Timeout: 10 * time.Second,
		Recorder: calls}, logger)
	if err != nil {
		return fmt.Errorf("connecting to the simulator: %w", err)
	}
	defer cs.Close()
	sk, err := startSink(simCtx, o.dataDir, logger)
	if err != nil {
		return err
	}
	ncfg.AllowLoopback = true // the sink is on 127.0.0.1
	// The same assembly as serve: app builds the engine, functions.Register
	// the handler.
	a, err := app.New(ctx, getenv, logger, app.Parts{Store: st, ClusterService: cs, Calls: calls, Notifier: notification.New(ncfg, nil)})
	if err != nil {
		return err
	}
	host, err := triggerhost.New(triggerhost.Config{
		App: fa, Worker: handlerWorker(a, getenv), HandlerPort: o.handlerPort,
		Feed: st, StateDir: stateDir, Leases: st.leases, Owner: owner(o.dataDir),
		HTTPAddr: o.httpAddr, FeedPollDelay: o.feedPollDelay, Logger: logger,
	})
	if err != nil {
		return err
	}
	hostCtx, stopHost := context.WithCancelCause(ctx)
	// A store that finds its file damaged fails every call from then on:
	// stop with its message, as serve does, rather than serve errors.
	damaged, damage := damageOf(st.Store)
	go func() {
		select {
		case <-damaged:
			stopHost(damage())
		case <-hostCtx.Done():
		}
	}()
	hostDone := make(chan error, 1)
	go func() {
		err := host.Run(hostCtx)
		if err != nil {
			stopHost(err)
		}
		hostDone <- err
	}()
	defer func() {
		stopHost(nil)
		if err := <-hostDone; err != nil {
			logger.DebugContext(ctx, "trigger host ended", "error", err) // stopHost has had it
		}
	}()
	select {
	case <-host.Started():
	case <-hostCtx.Done():
		err := <-hostDone
		hostDone <- err
		if err := damage(); err != nil {
			return fmt.Errorf("stopped before serving: %w", err)
		}
		if err != nil && ctx.Err() == nil {
			return explainHostError(o, err)
		}
		return stopReason(ctx)
	}
	// The tracker starts before the store is shared, so it shows every
	// operation the CLI writes.
	tr := newTracker(st, stdout, clock.Real{}, host.FrontURL())
	if err := tr.start(hostCtx); err != nil {
		return err
	}
	ev.attach(tr.onEvent)
	shared, err = storeapi.Share(st, o.dataDir, storeapi.Advert{Command: "hcpopsctl dev", FunctionsURL: host.FrontURL(), Store: st.name,
		Settings: lifecycle.Settings(getenv), NotificationURL: sk.URL()}, logger)
	if err != nil {
		return err
	}
	banner(stdout, o, fa, st, shared.Advert(), simURL, sk.URL(), host)
	simStateLine(stdout, simState, restored)
	tr.showEarlier()
	if o.hooks.simulator != nil {
		o.hooks.simulator(sim)
	}
	if o.hooks.started != nil {
		o.hooks.started(host)
	}
	err = serveRun(ctx, hostCtx, o, st, sim, sk, host, tr, stdout, logger)
	if err := damage(); err != nil {
		return fmt.Errorf("stopped serving: %w", err)
	}
	return err
}

// damageOf is the embedded store's damage signal and error; a store that
// cannot be damaged (Cosmos DB) never signals.
func damageOf(s store.Store) (<-chan struct{}, func() error) {
	d, ok := s.(interface {
		Damaged() <-chan struct{}
		Err() error
	})
	if !ok {
		return nil, func() error { return nil }
	}
	return d.Damaged(), d.Err
}

// serveRun runs the samples (unless -samples=false), then follows every
// operation written to the store until the run ends.
func serveRun(ctx, hostCtx context.Context, o options, st store.Store, sim *simulator.Simulator, sk *armsink.Sink,
	host *triggerhost.Host, tr *tracker, stdout io.Writer, logger *slog.Logger) error {
	run, note := sampleDecision(o)
	if note != "" {
		fmt.Fprintln(stdout, "\n"+note)
	}
	if !run {
		fmt.Fprintln(stdout, "\nserving; operations submitted with hcpopsctl submit show here. Interrupt to stop.")
		follow(hostCtx, tr, logger)
		return hostFailure(ctx, hostCtx)
	}
	r, err := newRunner(st, sim, sk, tr, stdout, logger, samplePlan())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.dataDir, samplesFile), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		logger.WarnContext(ctx, "recording that the samples ran failed; the next run submits them again", "error", err)
	}
	runErr := r.run(hostCtx)
	if runErr == nil && o.hooks.settled != nil {
		o.hooks.settled(host, r.statusPaths())
	}
	outcome := r.report()
	if err := hostFailure(ctx, hostCtx); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("stopped before every sample operation finished: %w (%v)", stopReason(ctx), outcome)
	}
	if o.exitWhenDone {
		return outcome
	}
	fmt.Fprintln(stdout, "\nstill serving; operations submitted with hcpopsctl submit show here. Interrupt to stop.")
	follow(hostCtx, tr, logger)
	if err := hostFailure(ctx, hostCtx); err != nil {
		return err
	}
	if errors.Is(context.Cause(ctx), errTimeout) {
		return outcome
	}
	return nil
}

// checkSettings reads every setting the run uses, so a bad one stops it
// before anything is created on disk.
func checkSettings(getenv func(string) string) (notification.Config, error) {
	if _, err := functions.ConfigFromEnv(getenv); err != nil {
		return notification.Config{}, err
	}
	if _, err := lifecycle.ConfigFromEnv(getenv); err != nil {
		return notification.Config{}, err
	}
	if _, err := armread.ReadConfigFromEnv(getenv); err != nil {
		return notification.Config{}, err
	}
	return notification.ConfigFromEnv(getenv)
}

// refuseHeld stops a second dev on a data dir whose store another hcpops
// process serves, naming it, before this run creates or truncates a file.
func refuseHeld(ctx context.Context, dir string) error {
	_, a, err := storeapi.Dial(ctx, dir, 2*time.Second)
	if err != nil {
		return nil // nobody answers; opening the store is the final word
	}
	return fmt.Errorf("the data dir %s is in use by %s (pid %d, since %s): stop it, or pass -data-dir DIR to run another dev beside it",
		dir, a.Command, a.PID, a.Since.Local().Format(time.TimeOnly))
}

// explainHostError names the flag behind a port that is taken.
func explainHostError(o options, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("the trigger host cannot listen: %w; another hcpopsctl dev (or func start) may hold it: stop it, or pass -http-addr 127.0.0.1:PORT (-handler-port for the handler's port)", err)
	}
	return fmt.Errorf("the trigger host stopped: %w", err)
}

// hostFailure is the trigger host's own error, if it stopped by itself.
func hostFailure(ctx, hostCtx context.Context) error {
	if hostCtx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("the trigger host stopped: %w", context.Cause(hostCtx))
	}
	return nil
}

// stopReason says why ctx ended: the -timeout, or an interrupt.

func stopReason(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return errTimeout
	}
	return errors.New("interrupted")
}

// samplesFile records in the data dir that a run submitted the samples,
// and when: a restart then follows what you submitted instead of burying
// it under another round of samples.
const samplesFile = "samples-ran"

// sampleDecision says whether this run submits the samples, and what to
// say when it does not though -samples is on by default.
func sampleDecision(o options) (run bool, note string) {
	if !o.samples {
		return false, ""
	}
	if o.samplesAsked {
		return true, ""
	}
	b, err := os.ReadFile(filepath.Join(o.dataDir, samplesFile))
	if err != nil {
		return true, ""
	}
	return false, fmt.Sprintf("the sample operations ran in %s on an earlier run (%s): not again, so what you follow stays in view; -samples runs them again, -reset starts afresh",
		o.dataDir, strings.TrimSpace(string(b)))
}

// prepareDataDir creates the data dir (and with reset, empties what this
// command keeps there: the store, host state, the simulator's objects) and
// returns the host state dir. With the embedded
// store, host state without a store is dropped: its leases point into a
// feed that no longer exists and would skip the new store's first changes.
// On Cosmos DB the leases live in the database, and nothing is dropped.
func prepareDataDir(dir string, reset, embeddedStore bool) (stateDir string, err error) {
	storePath, stateDir := filepath.Join(dir, localstore.StoreFileName), filepath.Join(dir, "host")
	simState := filepath.Join(dir, simulator.SnapshotFile)
	if _, err := os.Stat(storePath); embeddedStore && errors.Is(err, fs.ErrNotExist) {
		reset = true
	}
	if reset {
		for _, p := range []string{storePath, stateDir, simState, filepath.Join(dir, samplesFile)} {
			if err := os.RemoveAll(p); err != nil {
				return "", fmt.Errorf("resetting %s: %w", p, err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating data dir %s: %w", dir, err)
	}
	return stateDir, nil
}

// overrideSchedules applies -schedule to the loaded timers.
func overrideSchedules(app *functionapp.App, schedules map[string]string) error {
	names := make([]string, 0, len(schedules))
	for n := range schedules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		found := false
		for i, fn := range app.Functions {
			for j, b := range fn.Bindings {
				if fn.Name == name && b.Type == functionapp.TypeTimerTrigger {
					app.Functions[i].Bindings[j].Schedule = schedules[name]
					found = true
				}
			}
		}
		if !found {
			return fmt.Errorf("hcpopsctl dev: -schedule %s: no timer function of that name", name)
		}
	}
	return nil
}

// simStateLine says where the simulator's objects are kept, and whether
// this run took them over from the last.
func simStateLine(w io.Writer, path string, restored bool) {
	how := "kept across restarts; -reset empties it"
	if restored {
		how = "restored from the last run; -reset empties it"
	}
	fmt.Fprint(w, layout("  cs state       "+path, "", "("+how+")"))
}
