// Package soak is the fault-injection soak of the whole backend (`make
// soak`, which runs harness/cmd/soak, and a short version in `make test`): hundreds of
// operations of every kind, submitted the way ARO-HCP's frontend writes
// them, are carried by the real custom handler (two `hcpops serve`
// processes on one store, each SIGKILLed and restarted mid-run) through the
// local trigger host (every change-feed batch twice, some out of order) on
// the local Cosmos-compatible store behind a proxy that throttles (429),
// refuses (503, 408) and slows the handlers' requests, against a Clusters
// Service simulator injecting 5xx, 429, hung calls and latency spikes, with
// a sick subset of clusters CS never answers properly, a window in which
// CS is misrouted (its own 404 for everything) and one in which a gateway
// answers for it, and an ARM notification endpoint that fails 30% of
// POSTs. Then every invariant is checked: expected outcomes, sick ones
// Failed at their deadline, no cluster delete Succeeded before CS itself
// answered 404 for the cluster, ticks within budget, one CS create per
// object, notifications delivered and cleared, no lost or stomped update,
// no leaked goroutine.
package soak

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// options are the flags of harness/cmd/soak, and what tests set.
type options struct {
	ops      int
	duration time.Duration // scenarios start over this window, and the kills fall in it
	settle   time.Duration // how long after the window everything may take to finish
	seed     uint64
	phase    time.Duration // simulated Clusters Service phase
	kills    int           // 0: one per 20s of duration, at least 2

	handler        string // the hcpops binary run as `serve`
	scriptRoot     string // host.json and functions/; "" finds the module root
	cosmosEndpoint string // a running Cosmos test server; "" starts one
	logPath        string // "" logs to a temporary file

	feedReorder    float64
	notifyFailRate float64

	instances    int           // `hcpops serve` processes on the one store
	sickEvery    int           // one scenario in this many is sick; 0: none
	sickDeadline time.Duration // the sick clusters' create deadline
	csHangRate   float64       // CS requests that never answer
	lyingEvery   int           // one CS id search in this many lists every object twice, the copy failed; 0: none
	cosmosFaults bool          // throttle, refuse and slow the handlers' store requests
	// misroutedWindow and gatewayWindow are how long CS is misrouted (its
	// own 404s, empty lists) and answered for by a gateway, once each in
	// the middle of the run; 0: never.
	misroutedWindow, gatewayWindow time.Duration
	// stripIfMatch switches the store's ETag guard off, for checking the
	// soak itself: lost updates then go through and the run must fail.
	stripIfMatch bool

	logw io.Writer // logs go here instead of a file; tests set it
}

func defaultOptions() options {
	return options{
		ops: 1500, duration: 3 * time.Minute, settle: 5 * time.Minute, seed: uint64(time.Now().UnixNano()),
		phase: 300 * time.Millisecond, feedReorder: 0.3, notifyFailRate: 0.3,
		instances: 2, sickEvery: 7, sickDeadline: 20 * time.Second, csHangRate: 0.01, lyingEvery: 10, cosmosFaults: true,
		misroutedWindow: 3 * time.Second, gatewayWindow: 3 * time.Second,
	}
}

var errHelp = errors.New("help requested")

func parseOptions(args []string, usage io.Writer) (options, error) {
	o := defaultOptions()
	fs := flag.NewFlagSet("hcpops soak", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.IntVar(&o.ops, "ops", o.ops, "at least this many requests, in whole cluster scenarios")
	fs.DurationVar(&o.duration, "duration", o.duration, "scenarios start evenly over this window; the handler kills fall in it")
	fs.DurationVar(&o.settle, "settle", o.settle, "after the window, how long the operations may take to finish")
	fs.Uint64Var(&o.seed, "seed", o.seed, "seed of the plan, the simulator and the injected faults (default: the clock)")
	fs.DurationVar(&o.phase, "phase", o.phase, "simulated Clusters Service phase; installing, updating and uninstalling take twice as long")
	fs.IntVar(&o.kills, "kills", 0, "SIGKILLs of the handler instances, taken in turn (0: one per 20s of -duration, at least 2 and one per instance)")
	fs.StringVar(&o.handler, "handler", "", "the hcpops binary to run as the custom handler (default: this executable)")
	fs.StringVar(&o.scriptRoot, "script-root", "", "Functions app root with host.json and functions/ (default: the module root above the working directory)")
	fs.StringVar(&o.cosmosEndpoint, "cosmos-endpoint", "", "a running Cosmos test server (default: start tools/cosmos-test-server)")
	fs.StringVar(&o.logPath, "log", "", "write the handler's and the host's logs here (default: a temporary file)")
	fs.IntVar(&o.instances, "instances", o.instances, "hcpops serve processes sharing the store: change-feed batches split between them, every timer tick sent to each")
	fs.IntVar(&o.sickEvery, "sick-every", o.sickEvery, "one scenario in this many has a sick cluster that CS hangs on or answers with garbage for the whole run (0: none)")
	fs.DurationVar(&o.sickDeadline, "sick-deadline", o.sickDeadline, "create deadline of the sick clusters; they must end Failed at it")
	fs.Float64Var(&o.csHangRate, "cs-hang-rate", o.csHangRate, "share of Clusters Service requests that never answer")
	fs.IntVar(&o.lyingEvery, "lying-list-every", o.lyingEvery, "one Clusters Service id search (the tick's batched reads) in this many lists every object twice, the copy failed (0: none)")
	fs.DurationVar(&o.misroutedWindow, "misrouted-window", o.misroutedWindow, "how long, once from 40% of -duration on (when a cluster delete and an accepted create or update are in flight), Clusters Service answers its own 404 for every object read and an empty list for every search (0: never)")
	fs.DurationVar(&o.gatewayWindow, "gateway-window", o.gatewayWindow, "how long, once from 65% of -duration on (as -misrouted-window), a gateway answers Clusters Service's reads with 404s that are not CS's (a gateway's JSON, {}, an empty body, HTML) and its writes with HTML 404/502 (0: never)")
	fs.BoolVar(&o.cosmosFaults, "cosmos-faults", o.cosmosFaults, "inject 429 (with x-ms-retry-after-ms), 503, 408 and slow answers into the handlers' Cosmos reads, queries, replaces and batches")
	fs.BoolVar(&o.stripIfMatch, "break-etag-guard", false, "check the soak itself: strip If-Match from every store write, so stale writes go through; the run must then fail")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errHelp
		}
		return o, fmt.Errorf("hcpops soak: %w", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("hcpops soak: unexpected arguments %q", fs.Args())
	}
	return o, o.validate()
}

func (o options) validate() error {
	switch {
	case o.ops <= 0:
		return fmt.Errorf("hcpops soak: -ops %d: want a positive number", o.ops)
	case o.duration <= 0:
		return fmt.Errorf("hcpops soak: -duration %s: want a positive duration", o.duration)
	case o.settle <= 0:
		return fmt.Errorf("hcpops soak: -settle %s: want a positive duration", o.settle)
	case o.phase <= 0:
		return fmt.Errorf("hcpops soak: -phase %s: want a positive duration", o.phase)
	case o.kills < 0:
		return fmt.Errorf("hcpops soak: -kills %d: want 0 or more", o.kills)
	case o.kills == 1:
		return errors.New("hcpops soak: -kills 1: the soak kills the handler at least twice")
	case o.feedReorder < 0 || o.feedReorder > 1:
		return fmt.Errorf("hcpops soak: reorder rate %v: want [0,1]", o.feedReorder)
	case o.notifyFailRate < 0 || o.notifyFailRate >= 1:
		return fmt.Errorf("hcpops soak: notification failure rate %v: want [0,1)", o.notifyFailRate)
	case o.instances < 1 || o.instances > 8:
		return fmt.Errorf("hcpops soak: -instances %d: want 1 to 8", o.instances)
	case o.kills > 0 && o.kills < o.instances:
		return fmt.Errorf("hcpops soak: -kills %d with -instances %d: every instance is killed at least once", o.kills, o.instances)
	case o.sickEvery < 0 || o.sickEvery == 1:
		return fmt.Errorf("hcpops soak: -sick-every %d: want 0 (no sick subset) or 2 and more", o.sickEvery)
	case o.lyingEvery < 0:
		return fmt.Errorf("hcpops soak: -lying-list-every %d: want 0 (none) or more", o.lyingEvery)
	case o.misroutedWindow < 0 || o.misroutedWindow > o.duration/4:
		return fmt.Errorf("hcpops soak: -misrouted-window %s: want 0 (none) up to a quarter of -duration", o.misroutedWindow)
	case o.gatewayWindow < 0 || o.gatewayWindow > o.duration/4:
		return fmt.Errorf("hcpops soak: -gateway-window %s: want 0 (none) up to a quarter of -duration", o.gatewayWindow)
	case o.sickDeadline <= 0:
		return fmt.Errorf("hcpops soak: -sick-deadline %s: want a positive duration", o.sickDeadline)
	case o.csHangRate < 0 || o.csHangRate > 1-csErrorRate-csThrottleRate:
		return fmt.Errorf("hcpops soak: -cs-hang-rate %v: want [0,%v]", o.csHangRate, 1-csErrorRate-csThrottleRate)
	}
	return nil
}

// killCount is how many times the run kills the handler.
func (o options) killCount() int {
	if o.kills > 0 {
		return o.kills
	}
	return max(2, o.instances, int(o.duration/(20*time.Second)))
}

// Main runs the soak; args are harness/cmd/soak's flags. The summary
// goes to stdout; the error lists what broke.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args, stdout)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.handler == "" {
		if o.handler, err = os.Executable(); err != nil {
			return fmt.Errorf("hcpops soak: finding this executable to run as the handler: %w", err)
		}
	}
	return run(ctx, o, stdout)
}
