// Package soak is the fault-injection soak of the whole backend (`hcpops
// soak`, `make soak`, and a short version in `make test`): hundreds of
// operations of every kind, submitted the way ARO-HCP's frontend writes
// them, are carried by the real custom handler (a child `hcpops serve`
// process, SIGKILLed and restarted mid-run) through the local trigger host
// (every change-feed batch twice, some out of order) on the local
// Cosmos-compatible store, against a Clusters Service simulator injecting
// 5xx, 429 and latency spikes and an ARM notification endpoint that fails
// 30% of POSTs. Then every invariant is checked: expected outcomes, one CS
// create per object, notifications delivered and cleared, no lost or
// stomped update, no leaked goroutine.
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

// options are the flags of `hcpops soak`, and what tests set.
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
	// stripIfMatch switches the store's ETag guard off, for checking the
	// soak itself: lost updates then go through and the run must fail.
	stripIfMatch bool

	logw io.Writer // logs go here instead of a file; tests set it
}

func defaultOptions() options {
	return options{
		ops: 1500, duration: 3 * time.Minute, settle: 5 * time.Minute, seed: uint64(time.Now().UnixNano()),
		phase: 300 * time.Millisecond, feedReorder: 0.3, notifyFailRate: 0.3,
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
	fs.IntVar(&o.kills, "kills", 0, "SIGKILLs of the handler (0: one per 20s of -duration, at least 2)")
	fs.StringVar(&o.handler, "handler", "", "the hcpops binary to run as the custom handler (default: this executable)")
	fs.StringVar(&o.scriptRoot, "script-root", "", "Functions app root with host.json and functions/ (default: the module root above the working directory)")
	fs.StringVar(&o.cosmosEndpoint, "cosmos-endpoint", "", "a running Cosmos test server (default: start tools/cosmos-test-server)")
	fs.StringVar(&o.logPath, "log", "", "write the handler's and the host's logs here (default: a temporary file)")
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
	}
	return nil
}

// killCount is how many times the run kills the handler.
func (o options) killCount() int {
	if o.kills > 0 {
		return o.kills
	}
	return max(2, int(o.duration/(20*time.Second)))
}

// Main runs `hcpops soak`; args are the flags after "soak". The summary
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
