package devhost

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/simulator"
)

// options are the flags of `hcpopsctl dev`.
type options struct {
	scriptRoot string
	dataDir    string
	reset      bool
	// createContainers: nil means by the endpoint (on for loopback).
	createContainers *bool
	httpAddr         string
	csAddr           string
	handlerPort      int
	feedPollDelay    time.Duration
	phase            time.Duration
	simDurations     string
	schedules        map[string]string
	samples          bool
	// samplesAsked: -samples (or -exit-when-done) was given, so the
	// samples run even when an earlier run in the data dir ran them.
	samplesAsked bool
	exitWhenDone bool
	timeout      time.Duration
	logLevel     slog.Level
	verbose      bool
	// logPath is the log file; "" logs to the writer run is given.
	logPath string

	// hooks let tests act on a running host; no flag sets them.
	hooks hooks
}

// hooks are called, when set, as the run reaches each point.
type hooks struct {
	// started: the host serves and no sample has been submitted yet.
	started func(*triggerhost.Host)
	// simulator: the Clusters Service simulator, before started.
	simulator func(*simulator.Simulator)
	// settled: every sample is settled and the host still serves;
	// statusPaths maps each sample to its Azure-AsyncOperation path.
	settled func(h *triggerhost.Host, statusPaths map[string]string)
}

// errHelp: -h was asked for and the usage was printed.
var errHelp = errors.New("help requested")

func parseOptions(args []string, lookupEnv func(string) (string, bool), usage io.Writer) (options, error) {
	o := options{schedules: map[string]string{}}
	dataDir := localstore.DataDir(func(k string) string { v, _ := lookupEnv(k); return v })
	fs := flag.NewFlagSet("hcpopsctl dev", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // an error is returned once, not printed here too
	fs.StringVar(&o.scriptRoot, "script-root", ".", "Functions app root: host.json and functions/*/function.json (or */function.json)")
	fs.StringVar(&o.dataDir, "data-dir", dataDir, "embedded store, host state and "+LogFile+"; the CLI's default too ($"+localstore.EnvDataDir+" when set)")
	fs.BoolVar(&o.reset, "reset", false, "delete the data dir's store and host state before starting")
	fs.Var(optionalBool{&o.createContainers}, "create-containers", "on Cosmos DB, create the database, Resources and leases if missing, as upstream deploys them (default: on for a loopback endpoint, off otherwise)")
	fs.StringVar(&o.httpAddr, "http-addr", "127.0.0.1:7071", "front door for HTTP functions (loopback only)")
	fs.StringVar(&o.csAddr, "cs-addr", "127.0.0.1:0", "listen address of the Clusters Service simulator (loopback only; a fixed port lets a frontend beside dev use it)")
	fs.IntVar(&o.handlerPort, "handler-port", 0, "FUNCTIONS_CUSTOMHANDLER_PORT for the handler (0: a free port)")
	fs.DurationVar(&o.feedPollDelay, "feed-poll-delay", 500*time.Millisecond, "change feed poll delay, overriding function.json's feedPollDelay (0: keep it)")
	fs.DurationVar(&o.phase, "phase", 3*time.Second, "simulated Clusters Service phase length; installing, updating, upgrading and uninstalling take twice as long")
	fs.StringVar(&o.simDurations, "sim-durations", "", "per-phase overrides, e.g. cluster_installing=10s,node_pool_installing=5s")
	fs.Func("schedule", "override a timer's schedule, NAME=NCRONTAB (repeatable), e.g. 'pollOperations=*/2 * * * * *'", func(v string) error {
		name, expr, ok := strings.Cut(v, "=")
		if !ok || name == "" || strings.TrimSpace(expr) == "" {
			return fmt.Errorf("want NAME=NCRONTAB, got %q", v)
		}
		o.schedules[name] = strings.TrimSpace(expr)
		return nil
	})
	fs.BoolVar(&o.samples, "samples", true, "submit the sample operations and show their progress; by default only when no earlier run\nin the data dir did (-samples runs them again)")
	fs.BoolVar(&o.exitWhenDone, "exit-when-done", false, "exit once every sample operation is terminal: 0 if all ended as expected")
	fs.DurationVar(&o.timeout, "timeout", 0, "stop after this long (0: run until interrupted)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	fs.BoolVar(&o.verbose, "v", false, "copy the logs to stderr too (they always go to the data dir's "+LogFile+")")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fmt.Fprintln(usage, "usage: hcpopsctl dev [flags]\n\nThe whole lifecycle on one machine: the embedded store (or the Cosmos DB database CosmosDB /\nCosmosDB__accountEndpoint and COSMOS_DATABASE name), Clusters Service simulator, notification\nsink, the handler and a local Functions trigger host; sample operations unless -samples=false.\n\nflags:")
			fs.PrintDefaults()
			return o, errHelp
		}
		return o, fmt.Errorf("hcpopsctl dev: %w ('hcpopsctl dev -h' lists flags)", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("hcpopsctl dev: unexpected arguments %q", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { o.samplesAsked = o.samplesAsked || f.Name == "samples" })
	o.samplesAsked = o.samplesAsked || o.exitWhenDone
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("hcpopsctl dev: -log-level %q: want debug, info, warn or error", *level)
	}
	switch {
	case o.dataDir == "":
		return o, errors.New("hcpopsctl dev: -data-dir is empty")
	case o.phase <= 0:
		return o, fmt.Errorf("hcpopsctl dev: -phase %s: want a positive duration", o.phase)
	case o.feedPollDelay < 0:
		return o, fmt.Errorf("hcpopsctl dev: -feed-poll-delay %s: want 0 or more", o.feedPollDelay)
	case o.timeout < 0:
		return o, fmt.Errorf("hcpopsctl dev: -timeout %s: want 0 or more", o.timeout)
	case o.handlerPort < 0 || o.handlerPort > 65535:
		return o, fmt.Errorf("hcpopsctl dev: -handler-port %d: want 0-65535", o.handlerPort)
	case o.exitWhenDone && !o.samples:
		return o, errors.New("hcpopsctl dev: -exit-when-done needs -samples")
	case !loopbackAddr(o.csAddr):
		return o, fmt.Errorf("hcpopsctl dev: -cs-addr %q: want 127.0.0.1:PORT (the simulator listens on loopback only)", o.csAddr)
	}
	if _, err := o.durations(); err != nil {
		return o, err
	}
	return o, nil
}

func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// durations are the simulator's phases from -phase, then the overrides.
// The working phases last twice as long as the others, so that with the
// default 5 s they span a whole 10 s poll interval and every in-between
// state shows in the progress. Credentials keep a long expiry so a run
// never sees one lapse.
func (o options) durations() (simulator.Durations, error) {
	p, long := o.phase, 2*o.phase
	d := simulator.Durations{
		ClusterValidating: p, ClusterPending: p, ClusterInstalling: long, ClusterUpdating: long, ClusterUninstalling: long,
		NodePoolValidating: p, NodePoolPending: p, NodePoolInstalling: long, NodePoolUpdating: long, NodePoolUninstalling: long,
		ExternalAuthUninstalling: p, CredentialIssuing: p, CredentialRevoking: p,
		// Upgrades too: left at zero, CS ran the new version at once and
		// the samples' upgrades were never seen Updating.
		ControlPlaneUpgradeScheduled: p, ControlPlaneUpgrading: long, NodePoolUpgradeScheduled: p, NodePoolUpgrading: long,
		CredentialExpiry: simulator.DefaultDurations().CredentialExpiry,
	}
	if err := d.ParseList(o.simDurations); err != nil {
		return d, fmt.Errorf("hcpopsctl dev: -sim-durations: %w", err)
	}
	return d, nil
}
