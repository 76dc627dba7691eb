// Package benchmark is `hcpopsctl bench`: it measures the poll tick's fan-out,
// change-feed dispatch through the real handler, the handler layer alone
// and the cold start of the shipped binary, against the Clusters Service
// simulator with added latency and the embedded store, and judges the
// figures against the project's targets.
package benchmark

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
)

// Scenario names for -scenarios.
const (
	// ScenarioTickFirst is a process's first tick: the full read that
	// builds its view of the active set, as every tick read before it.
	ScenarioTickFirst = "tick-first"
	// ScenarioTickUnchanged is a tick after the first, nothing changed.
	ScenarioTickUnchanged = "tick-unchanged"
	// ScenarioTickOnePercent is a tick after another writer rewrote 1%
	// of the operations and their clusters.
	ScenarioTickOnePercent = "tick-1pct"
	ScenarioTickChanged    = "tick-changed"
	ScenarioTickCosmos     = "tick-cosmos"
	ScenarioDispatch       = "dispatch"
	ScenarioHandler        = "handler"
	ScenarioColdStart      = "coldstart"
)

// Store modes for -store.
const (
	storeDurable = "durable"
	storeNoSync  = "nosync"
	storeCosmos  = "cosmos" // the Cosmos test server, in reports only
)

func allScenarios() []string {
	return []string{ScenarioTickFirst, ScenarioTickUnchanged, ScenarioTickOnePercent, ScenarioTickChanged, ScenarioTickCosmos,
		ScenarioDispatch, ScenarioHandler, ScenarioColdStart}
}

type options struct {
	ns           []int
	changedMaxN  int
	cosmosN      int
	batchSize    int
	concurrency  int
	latency      time.Duration
	out          string
	quick        bool
	scenarios    []string
	storeModes   []string
	dispatchOps  int
	batchOps     int
	handlerIters int
	coldRuns     int
	binary       string
	src          string
	goCmd        string
	cpuProfile   string
	keep         bool
	rounds       int
}

func (o options) has(s string) bool { return slices.Contains(o.scenarios, s) }

func parseFlags(args []string, stdout io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stdout)
	n := fs.String("n", "1000,10000,100000", "active operations per poll tick, a comma-separated list")
	changedMax := fs.Int("changed-max-n", 10000, "largest N at which the every-operation-changed tick is measured")
	cosmosN := fs.Int("cosmos-n", 10000, "active operations in the tick on the Cosmos test server")
	batch := fs.Int("batch-size", lifecycle.DefaultCSBatchSize, "CS objects per list call ("+lifecycle.EnvCSBatchSize+"); 1 is one GET per object, as before batching")
	conc := fs.Int("concurrency", 64, "poll and dispatch concurrency (HCPOPS_POLL_CONCURRENCY)")
	lat := fs.Duration("latency", 20*time.Millisecond, "latency the CS simulator adds to every request")
	out := fs.String("out", "", "write the report as JSON to this file")
	quick := fs.Bool("quick", false, "a fast smoke run: N=200, fewer operations and runs")
	scen := fs.String("scenarios", "all", "comma-separated: "+strings.Join(allScenarios(), ", ")+", or all")
	modes := fs.String("store", "durable,nosync", "embedded store modes for writing scenarios: durable, nosync or both")
	dops := fs.Int("dispatch-ops", 1000, "operations sent through /dispatchOperations")
	bops := fs.Int("batch", 100, "new operations per change-feed batch")
	iters := fs.Int("handler-iterations", 2000, "invocations timed in the handler scenario")
	runs := fs.Int("runs", 7, "cold starts to take the median of")
	binary := fs.String("binary", "", "cold start this prebuilt hcpops instead of building one (sizes are then not reported)")
	src := fs.String("src", "", "module directory to build hcpops from (default: the current module)")
	goCmd := fs.String("go", "go", "go command used to build hcpops")
	prof := fs.String("cpuprofile", "", "write a CPU profile of each measured child to this path, suffixed with the scenario")
	keep := fs.Bool("keep", false, "keep the scratch directory (stores, specs) and print where it is")
	rounds := fs.Int("rounds", 1, "times the unchanged and 1% ticks are measured after one seeding; the round of median CPU is reported, with every round's CPU")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := options{changedMaxN: *changedMax, cosmosN: *cosmosN, batchSize: *batch, concurrency: *conc, latency: *lat, out: *out, quick: *quick, dispatchOps: *dops, batchOps: *bops,
		handlerIters: *iters, coldRuns: *runs, binary: *binary, src: *src, goCmd: *goCmd, cpuProfile: *prof, keep: *keep, rounds: *rounds}
	if o.rounds < 1 || o.rounds > 100 {
		return options{}, fmt.Errorf("-rounds=%d: want 1 to 100", o.rounds)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	if o.ns, err = parseInts("-n", *n); err != nil {
		return options{}, err
	}
	if o.quick {
		if !set["n"] {
			o.ns = []int{200}
		}
		if !set["cosmos-n"] {
			o.cosmosN = 200
		}
		if !set["dispatch-ops"] {
			o.dispatchOps = 200
		}
		if !set["handler-iterations"] {
			o.handlerIters = 200
		}
		if !set["runs"] {
			o.coldRuns = 3
		}
	}
	if o.scenarios, err = parseList("-scenarios", *scen, allScenarios()); err != nil {
		return options{}, err
	}
	if o.storeModes, err = parseList("-store", *modes, []string{storeDurable, storeNoSync}); err != nil {
		return options{}, err
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"-concurrency", o.concurrency}, {"-dispatch-ops", o.dispatchOps}, {"-batch", o.batchOps},
		{"-changed-max-n", o.changedMaxN}, {"-cosmos-n", o.cosmosN},
		{"-handler-iterations", o.handlerIters}, {"-runs", o.coldRuns}} {
		if c.v < 1 {
			return options{}, fmt.Errorf("%s=%d: want at least 1", c.name, c.v)
		}
	}
	if o.batchSize < 1 || o.batchSize > lifecycle.MaxCSBatchSize {
		return options{}, fmt.Errorf("-batch-size=%d: want 1 to %d", o.batchSize, lifecycle.MaxCSBatchSize)
	}
	if o.latency < 0 {
		return options{}, fmt.Errorf("-latency=%s: want zero or more", o.latency)
	}
	return o, nil
}

func parseInts(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s=%q: %q is not a positive whole number", name, s, f)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseList(name, s string, allowed []string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch {
		case f == "all" || (f == "both" && name == "-store"):
			return allowed, nil
		case slices.Contains(allowed, f):
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		default:
			return nil, fmt.Errorf("%s=%q: unknown %q; want %s or all", name, s, f, strings.Join(allowed, ", "))
		}
	}
	return out, nil
}

// Main runs `hcpopsctl bench [flags]`. It prints the table to stdout and, with
// -out, writes the JSON report. The error says which scenarios failed or
// produced figures that contradict themselves; a missed target is not an
// error, it is a finding.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	if spec := os.Getenv(childEnv); spec != "" {
		return runChild(ctx, spec, stdout)
	}
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	r, err := run(ctx, o, stdout)
	if r != nil {
		r.print(stdout)
		if o.out != "" {
			if werr := os.MkdirAll(filepath.Dir(o.out), 0o755); werr != nil {
				return errors.Join(err, fmt.Errorf("-out=%q: %w", o.out, werr))
			}
			if werr := r.write(o.out); werr != nil {
				return errors.Join(err, werr)
			}
			fmt.Fprintf(stdout, "\nreport written to %s\n", o.out)
		}
	}
	return err
}

// run measures every selected scenario; a failing scenario is recorded
// and the others still run.
func run(ctx context.Context, o options, stdout io.Writer) (*Report, error) {
	dir, err := os.MkdirTemp("", "hcpops-bench-")
	if err != nil {
		return nil, fmt.Errorf("making a scratch directory: %w", err)
	}
	if o.cpuProfile != "" {
		if err := os.MkdirAll(filepath.Dir(o.cpuProfile), 0o755); err != nil {
			return nil, fmt.Errorf("-cpuprofile=%q: %w", o.cpuProfile, err)
		}
	}
	if o.keep {
		fmt.Fprintf(stdout, "scratch directory: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	r := &Report{
		Started: time.Now().UTC(),
		Host: HostInfo{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), GOOS: runtime.GOOS,
			GOARCH: runtime.GOARCH, LoadBefore: loadAverage()},
		Config: RunConfig{Ns: o.ns, CosmosN: o.cosmosN, BatchSize: o.batchSize, Concurrency: o.concurrency, LatencyMS: ms(o.latency), Quick: o.quick,
			Scenarios: o.scenarios, StoreModes: o.storeModes, DispatchOps: o.dispatchOps, BatchOps: o.batchOps,
			ColdStartRuns: o.coldRuns},
		Ticks: []TickFigures{}, Dispatch: []DispatchFigures{}, Errors: []string{},
	}
	fail := func(scenario string, err error) {
		r.Errors = append(r.Errors, fmt.Sprintf("%s: %v", scenario, err))
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(stdout, "... "+format+"\n", args...)
	}

	if o.has(ScenarioHandler) {
		progress("handler overhead, %d invocations", o.handlerIters)
		h, err := measureHandler(ctx, dir, o.handlerIters)
		if err != nil {
			fail(ScenarioHandler, err)
		}
		r.Handler = h
	}
	if o.has(ScenarioTickChanged) || o.has(ScenarioTickFirst) || o.has(ScenarioTickUnchanged) || o.has(ScenarioTickOnePercent) {
		for _, n := range o.ns {
			if err := runTicks(ctx, o, dir, n, r, progress); err != nil {
				fail(fmt.Sprintf("tick N=%d", n), err)
			}
		}
	}
	if o.has(ScenarioTickCosmos) {
		if err := runCosmosTick(ctx, o, dir, o.cosmosN, r, progress); err != nil {
			fail(fmt.Sprintf("%s N=%d", ScenarioTickCosmos, o.cosmosN), err)
		}
	}
	if o.has(ScenarioDispatch) {
		for _, mode := range o.storeModes {
			progress("dispatch of %d operations in batches of %d, %s store", o.dispatchOps, o.batchOps, mode)
			d, err := runDispatch(ctx, o, dir, mode)
			if err != nil {
				fail(ScenarioDispatch+" "+mode, err)
				continue
			}
			r.Dispatch = append(r.Dispatch, d)
		}
	}
	if o.has(ScenarioColdStart) {
		progress("cold start, %d runs", o.coldRuns)
		cs, err := runColdStart(ctx, o, dir)
		if err != nil {
			fail(ScenarioColdStart, err)
		}
		r.ColdStart = cs
	}
	r.Host.LoadAfter = loadAverage()
	r.Seconds = time.Since(r.Started).Seconds()
	r.Targets = targets(r)
	if len(r.Errors) > 0 {
		return r, fmt.Errorf("%d scenario(s) failed: %s", len(r.Errors), strings.Join(r.Errors, "; "))
	}
	return r, nil
}
