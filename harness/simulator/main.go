package simulator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
)

// Main runs `hcpopsctl cs-simulator --listen 127.0.0.1:PORT [flags]` until ctx
// is done. args are the flags after the subcommand name; -h prints the
// usage to stdout and returns nil.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cs-simulator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:8000", "listen address (host must be 127.0.0.1)")
	seed := fs.Uint64("seed", 1, "seed for IDs, jitter and faults")
	durations := fs.String("durations", "", "phase duration overrides, e.g. cluster_installing=30s,node_pool_installing=10s")
	latency := fs.Duration("latency", 0, "fixed latency added to every CS request")
	jitter := fs.Duration("jitter", 0, "random extra latency, uniform in [0, jitter)")
	errorRate := fs.Float64("error-rate", 0, "fraction of CS requests answered with -error-status")
	errorStatus := fs.Int("error-status", 500, "5xx status for -error-rate")
	throttleRate := fs.Float64("throttle-rate", 0, "fraction of CS requests answered with 429")
	hangRate := fs.Float64("hang-rate", 0, "fraction of CS requests never answered")
	pageSize := fs.Int("page-size", 100, "default list page size")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, "usage: hcpopsctl cs-simulator [flags]\n\nThe Clusters Service simulator: CS's wire format and state machines on loopback, with\n"+
			"fault injection and the /_sim/ admin API (GET /_sim/ lists it; docs/simulator.md).\n\nflags:\n")
		fs.PrintDefaults()
		return nil
	} else if err != nil {
		return fmt.Errorf("cs-simulator: %w ('hcpopsctl cs-simulator -h' lists flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cs-simulator: unexpected arguments %q", fs.Args())
	}
	d := DefaultDurations()
	if err := d.ParseList(*durations); err != nil {
		return fmt.Errorf("cs-simulator: -durations: %w", err)
	}
	if *pageSize < 1 {
		return fmt.Errorf("cs-simulator: -page-size %d must be positive", *pageSize)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	sim := New(WithDurations(d), WithRandSource(rand.NewPCG(*seed, *seed)), WithPageSize(*pageSize), WithLogger(logger))
	defer sim.Close()
	if err := sim.SetLatency(Latency{Fixed: *latency, Jitter: *jitter}); err != nil {
		return fmt.Errorf("cs-simulator: %w", err)
	}
	if err := sim.SetFaults(Faults{ErrorRate: *errorRate, ErrorStatus: *errorStatus,
		ThrottleRate: *throttleRate, HangRate: *hangRate}); err != nil {
		return fmt.Errorf("cs-simulator: %w", err)
	}
	url, err := sim.Start(ctx, *listen)
	if err != nil {
		return fmt.Errorf("cs-simulator: %w", err)
	}
	logger.InfoContext(ctx, "cs simulator listening", "url", url, "admin", url+"/_sim/")
	// On stdout too, for whoever started it on a free port to find it.
	fmt.Fprintf(stdout, "cs-simulator: serving %s (admin API %s/_sim/)\n", url, url)
	<-ctx.Done()
	return nil
}
