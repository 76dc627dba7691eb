package dst

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	seedFlag      = flag.Uint64("seed", 0, "replay this one seed, printing its trace and the engine's log")
	seedsFlag     = flag.Int("seeds", 0, "run this many seeds, from -from (TestSearch)")
	fromFlag      = flag.Uint64("from", 1, "the first seed of -seeds")
	durationFlag  = flag.Duration("duration", 0, "stop starting seeds after this much wall-clock time (0: run them all)")
	simFlag       = flag.Duration("sim", 0, "simulated time of requests and faults in a run (default 1h)")
	intensityFlag = flag.Float64("intensity", 1, "scale of the fault windows a run draws")
	workersFlag   = flag.Int("workers", runtime.GOMAXPROCS(0), "runs at once")
	replaysFlag   = flag.Int("replays", 0, "TestReplayIsExact: run N seeds from -from twice each instead of its fixed few")
	dropFlag      = flag.String("drop", "", "leave out these fault windows of the seed's plan, e.g. 0,3 (a narrowed replay)")
	digestsFlag   = flag.Bool("digests", false, "log every run's digest: two builds that log the same digests for the same seeds did the same things")
)

func options() Options {
	o := Options{Duration: *simFlag, Intensity: *intensityFlag}
	for f := range strings.SplitSeq(*dropFlag, ",") {
		if i, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			o.Drop = append(o.Drop, i)
		}
	}
	return o
}

// TestSimulation replays one seed with -seed N (the command a failure
// prints: its whole trace, and with DST_LOGS=1 the engine's log), or
// searches -seeds N seeds from -from (make dst).
func TestSimulation(t *testing.T) {
	switch {
	case *seedFlag != 0:
		replay(t, *seedFlag)
	case *seedsFlag != 0:
		seeds := make([]uint64, *seedsFlag)
		for i := range seeds {
			seeds[i] = *fromFlag + uint64(i)
		}
		_, cover := search(t, seeds)
		t.Logf("coverage (fault × route, requests, terminal states):\n%s", strings.Join(cover.table(), "\n"))
	default:
		// Without flags: a replay of the first kept seed, as make dst
		// SEED=N runs one, passes.
		replay(t, regressions(t)[0])
	}
}

func replay(t *testing.T, seed uint64) {
	var logs strings.Builder
	opts := options()
	opts.Logs = &logs
	res := Run(t, seed, opts)
	t.Logf("seed %d: %d operations, digest %s", res.Seed, res.Ops, res.Digest)
	for _, r := range res.Residual {
		t.Logf("residual risk (docs/arm.md), reported, not failed: %s", r)
	}
	if os.Getenv("DST_LOGS") != "" {
		t.Logf("engine log:\n%s", logs.String())
	}
	if res.Failed() && len(res.Windows) > 0 {
		dropped, narrowed := Minimize(t, res, options())
		if len(dropped) > 0 {
			t.Logf("narrowed: it still breaks a rule without fault windows %v of %d (replay that with -drop); then:",
				dropped, len(res.Windows))
			res.Problems, res.Trace, res.Dropped = narrowed.Problems, narrowed.Trace, dropped
		}
	}
	report(t, res, true)
}

// report fails t with a failed run's problems, its shortened trace and
// the command that replays it.
func report(t *testing.T, res Result, full bool) {
	t.Helper()
	if !res.Failed() {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d broke %d rules:\n", res.Seed, len(res.Problems))
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	lines := res.Trace
	if !full && len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	fmt.Fprintf(&b, "trace (%d lines about its ids, faults and restarts):\n", len(res.Trace))
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	drop := ""
	if len(res.Dropped) > 0 {
		drop = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(res.Dropped)), ","), "[]")
		drop = " DROP=" + drop
	}
	fmt.Fprintf(&b, "replay: make dst SEED=%d%s   (go test ./harness/dst -run TestSimulation -seed %d -v)", res.Seed, drop, res.Seed)
	t.Error(b.String())
}

// regressions are the seeds that once broke a rule, kept in
// testdata/seeds.txt with what they found.
func regressions(t *testing.T) []uint64 {
	t.Helper()
	data, err := os.ReadFile("testdata/seeds.txt")
	if err != nil {
		t.Fatalf("regression seeds: %v", err)
	}
	var out []uint64
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		field, _, _ := strings.Cut(line, " ")
		n, err := strconv.ParseUint(field, 10, 64)
		if err != nil {
			t.Fatalf("testdata/seeds.txt: %q is not a seed: %v", line, err)
		}
		out = append(out, n)
	}
	return out
}

// TestSeeds is make test's share of the simulation: every seed that once
// broke a rule, and a fixed set of others.
func TestSeeds(t *testing.T) {
	seeds := regressions(t)
	if len(seeds) == 0 {
		t.Fatal("testdata/seeds.txt names no seed")
	}
	for s := uint64(1000); s < 1150; s++ {
		seeds = append(seeds, s)
	}
	if failed, _ := search(t, seeds); failed > 0 {
		t.Logf("%d of %d seeds broke a rule", failed, len(seeds))
	}
}

// search runs seeds on workers at once and reports each failure, the
// runs per minute and the coverage of them all.
func search(t *testing.T, seeds []uint64) (failed int, cover *coverage) {
	t.Helper()
	cover = newCoverage()
	var (
		next   atomic.Int64
		ran    atomic.Int64
		resid  atomic.Int64
		nfail  atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		simHrs float64
	)
	start := time.Now()
	for range max(1, *workersFlag) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(seeds) || *durationFlag > 0 && time.Since(start) > *durationFlag {
					return
				}
				ran.Add(1)
				res := Run(t, seeds[i], options())
				cover.merge(res.Cover)
				mu.Lock()
				simHrs += options().withDefaults().Duration.Hours()
				mu.Unlock()
				if *digestsFlag {
					t.Logf("seed %d digest %s", res.Seed, res.Digest)
				}
				if res.Failed() {
					nfail.Add(1)
					report(t, res, false)
				}
				if len(res.Residual) > 0 {
					resid.Add(1)
					t.Logf("seed %d: the residual risk (no witness of its kind left): %s", res.Seed, res.Residual[0])
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d runs (%.0f simulated hours of requests and faults) in %s: %.0f runs a minute, %d failed, %d met the residual risk",
		ran.Load(), simHrs, took.Truncate(time.Millisecond), float64(ran.Load())/took.Minutes(), nfail.Load(), resid.Load())
	return int(nfail.Load()), cover
}

// TestReplayIsExact: a seed run twice does the same things in the same
// order.
func TestReplayIsExact(t *testing.T) {
	opts := options()
	opts.Steps = true
	seeds := []uint64{2, 3, 5, 8, 13, 17, 21, 34}
	if *replaysFlag > 0 {
		seeds = seeds[:0]
		for s := range *replaysFlag {
			seeds = append(seeds, *fromFlag+uint64(s))
		}
	}
	for _, seed := range seeds {
		a, b := Run(t, seed, opts), Run(t, seed, opts)
		if a.Digest == b.Digest {
			continue
		}
		for i := range min(len(a.Steps), len(b.Steps)) {
			if a.Steps[i] != b.Steps[i] {
				from := max(0, i-16)
				t.Errorf("seed %d ran two ways (%s and %s), first at step %d:\n  %s\nand\n  %s", seed, a.Digest, b.Digest, i,
					strings.Join(a.Steps[from:min(i+8, len(a.Steps))], "\n  "), strings.Join(b.Steps[from:min(i+8, len(b.Steps))], "\n  "))
				break
			}
		}
	}
}

// TestOracleFindsBrokenRules: an engine with one of its rules broken on
// purpose is caught within a few hundred seeds. Each mutant runs seeds
// until one fails that the unbroken engine passes.
func TestOracleFindsBrokenRules(t *testing.T) {
	for _, m := range []string{MutantLone404, MutantNoETag} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			// More fault windows than a default run: a broken rule shows
			// sooner, and so does a rule unbroken under heavier faults.
			opts, base := options(), options()
			opts.Intensity, base.Intensity = 3, 3
			opts.Mutation = m
			for seed := uint64(1); seed <= 300; seed++ {
				res := Run(t, seed, opts)
				if !res.Failed() || Run(t, seed, base).Failed() {
					continue // found nothing, or something the unbroken engine does too
				}
				t.Logf("found by seed %d: %s", seed, res.Problems[0])
				return
			}
			t.Errorf("300 seeds ran with %s and the oracle found nothing", m)
		})
	}
}
