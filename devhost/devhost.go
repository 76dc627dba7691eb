// Package devhost is `hcpops dev`: the whole operation lifecycle on one
// machine. It runs the embedded store, the Clusters Service simulator, a
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
	"time"

	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/clusterservice/simulator"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store/embedded"
	"github.com/hcpops/hcpops/devhost/functionapp"
	"github.com/hcpops/hcpops/devhost/triggerhost"
	polloperations "github.com/hcpops/hcpops/functions/pollOperations"
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
func devSettings() map[string]string {
	return map[string]string{"COSMOS_DATABASE": "hcpops", "HCPOPS_AUTH": "none"}
}

var errTimeout = errors.New("timed out")

// Main runs `hcpops dev`; args are the flags after "dev". Progress and the
// final table go to stdout, logs to stderr. It returns when ctx is done, or
// with -exit-when-done once the samples have finished.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args, os.LookupEnv, stdout)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return run(ctx, o, stdout, os.Stderr, functionapp.EnvironMap(os.Environ()))
}

func run(ctx context.Context, o options, stdout, logw io.Writer, env map[string]string) error {
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: o.logLevel}))
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errTimeout)
		defer cancel()
	}
	local, err := functionapp.LocalSettings(o.scriptRoot)
	if err != nil {
		return err
	}
	settings := functionapp.Settings(env, local, devSettings())
	getenv := func(k string) string { v, _ := settings(k); return v }

	app, err := functionapp.Load(o.scriptRoot, settings)
	if err != nil {
		return err
	}
	if err := overrideSchedules(app, o.schedules); err != nil {
		return err
	}
	storePath, stateDir, err := prepareDataDir(o.dataDir, o.reset)
	if err != nil {
		return err
	}
	st, err := embedded.Open(storePath, embedded.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("opening the embedded store: %w", err)
	}
	defer st.Close()

	durations, _ := o.durations()
	sim := simulator.New(simulator.WithDurations(durations), simulator.WithLogger(logger))
	defer sim.Close()
	simCtx, stopSim := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSim()
	simURL, err := sim.Start(simCtx, "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the Clusters Service simulator: %w", err)
	}
	cs, err := ocm.New(ctx, ocm.Config{URL: simURL, RetryLimit: 2, RetryInterval: 100 * time.Millisecond, Timeout: 10 * time.Second}, logger)
	if err != nil {
		return fmt.Errorf("connecting to the simulator: %w", err)
	}
	defer cs.Close()
	sk, err := notification.StartSink(simCtx, notification.SinkConfig{Logger: logger})
	if err != nil {
		return err
	}

	ncfg, err := notification.ConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	ncfg.AllowLoopback = true // the sink is on 127.0.0.1
	lcfg, err := lifecycle.ConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	engine, err := lifecycle.New(lifecycle.Deps{
		Store: st, ClusterService: cs, Notifier: notification.New(ncfg, nil), Clock: time.Now, Logger: logger,
	}, lcfg)
	if err != nil {
		return fmt.Errorf("building the lifecycle engine: %w", err)
	}

	poll, err := pollConfig(getenv)
	if err != nil {
		return err
	}
	host, err := triggerhost.New(triggerhost.Config{
		App: app, Worker: inProcessHandler(engine, poll, logger), HandlerPort: o.handlerPort,
		Feed: st, StateDir: stateDir, HTTPAddr: o.httpAddr, FeedPollDelay: o.feedPollDelay, Logger: logger,
	})
	if err != nil {
		return err
	}
	hostCtx, stopHost := context.WithCancelCause(ctx)
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
		<-hostDone
	}()
	select {
	case <-host.Started():
	case err := <-hostDone:
		hostDone <- err
		if err == nil {
			return stopReason(ctx)
		}
		return fmt.Errorf("the trigger host stopped: %w", err)
	case <-hostCtx.Done():
		return stopReason(ctx)
	}
	banner(stdout, o, app, storePath, simURL, sk.URL(), host)
	if o.hooks.started != nil {
		o.hooks.started(host)
	}

	if !o.samples {
		<-hostCtx.Done()
		return hostFailure(ctx, hostCtx)
	}
	r, err := newRunner(st, sim, sk, stdout, logger, samplePlan())
	if err != nil {
		return err
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
	fmt.Fprintln(stdout, "still serving; interrupt to stop")
	<-hostCtx.Done()
	if err := hostFailure(ctx, hostCtx); err != nil {
		return err
	}
	if errors.Is(context.Cause(ctx), errTimeout) {
		return outcome
	}
	return nil
}

// EnvPollBudget bounds one poll tick, as for `hcpops serve`.
const EnvPollBudget = "HCPOPS_POLL_BUDGET"

func pollConfig(getenv func(string) string) (polloperations.Config, error) {
	v := getenv(EnvPollBudget)
	if v == "" {
		return polloperations.Config{}, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return polloperations.Config{}, fmt.Errorf("%s=%q: want a positive duration like 4m", EnvPollBudget, v)
	}
	return polloperations.Config{Budget: d}, nil
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

// prepareDataDir creates the data dir (and with reset, empties what this
// command keeps there) and returns the store file and host state dir. Host
// state without a store is dropped: its leases point into a feed that no
// longer exists and would skip the new store's first changes.
func prepareDataDir(dir string, reset bool) (storePath, stateDir string, err error) {
	storePath, stateDir = filepath.Join(dir, "store.db"), filepath.Join(dir, "host")
	if _, err := os.Stat(storePath); errors.Is(err, fs.ErrNotExist) {
		reset = true
	}
	if reset {
		for _, p := range []string{storePath, stateDir} {
			if err := os.RemoveAll(p); err != nil {
				return "", "", fmt.Errorf("resetting %s: %w", p, err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("creating data dir %s: %w", dir, err)
	}
	return storePath, stateDir, nil
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
			return fmt.Errorf("hcpops dev: -schedule %s: no timer function of that name", name)
		}
	}
	return nil
}

func banner(w io.Writer, o options, app *functionapp.App, storePath, simURL, sinkURL string, host *triggerhost.Host) {
	fmt.Fprintf(w, "hcpops dev\n")
	fmt.Fprintf(w, "  store          %s\n", storePath)
	fmt.Fprintf(w, "  clusters svc   %s (simulator, phases of %s and %s)\n", simURL, o.phase, 2*o.phase)
	fmt.Fprintf(w, "  notifications  %s (sink)\n", sinkURL)
	fmt.Fprintf(w, "  handler        %s (in process)\n", host.Supervisor().BaseURL())
	if u := host.FrontURL(); u != "" {
		fmt.Fprintf(w, "  http functions %s\n", u)
	}
	for _, fn := range app.Functions {
		b := fn.Trigger()
		detail := b.Type
		switch b.Type {
		case functionapp.TypeTimerTrigger:
			detail += " " + b.Schedule
		case functionapp.TypeHTTPTrigger:
			detail += " /" + strings.Trim(app.Host.RoutePrefix+"/"+b.Route, "/")
		}
		fmt.Fprintf(w, "  function       %-20s %s\n", fn.Name, detail)
	}
}
