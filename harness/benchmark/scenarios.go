package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runTicks seeds n dispatched cluster creates once, then measures the tick
// that moves every one of them (Accepted to Provisioning: one batch write
// each; only up to -changed-max-n) and the tick after it, where CS says
// nothing new.
func runTicks(ctx context.Context, o options, dir string, n int, r *Report, progress func(string, ...any)) error {
	w, err := newCSWorld(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	golden := filepath.Join(dir, fmt.Sprintf("tick-%d.db", n))
	progress("seeding %d dispatched cluster creates", n)
	t0 := time.Now()
	if err := prepareTick(ctx, w, golden, n, o.concurrency, progress); err != nil {
		return err
	}
	progress("seeded in %s", time.Since(t0).Round(time.Millisecond))

	settled := ""
	if o.has(ScenarioTickChanged) && n <= o.changedMaxN {
		for _, mode := range o.storeModes {
			path := filepath.Join(dir, fmt.Sprintf("tick-%d-%s.db", n, mode))
			if err := copyFile(golden, path); err != nil {
				return err
			}
			progress("%s N=%d, %s store", ScenarioTickChanged, n, mode)
			fig, err := tickChild(ctx, o, w, nil, dir, path, mode, n, ScenarioTickChanged)
			if err != nil {
				return err
			}
			r.Ticks = append(r.Ticks, fig)
			if fig.Result.Changed != n || fig.Result.Polled != n || fig.Result.Errors != 0 {
				return fmt.Errorf("%s %s: polled %d, changed %d, errors %d; want %d, %d, 0",
					ScenarioTickChanged, mode, fig.Result.Polled, fig.Result.Changed, fig.Result.Errors, n, n)
			}
			if settled == "" {
				settled = path
			}
		}
	}
	steady := []string{ScenarioTickFirst, ScenarioTickUnchanged, ScenarioTickOnePercent}
	if !slices.ContainsFunc(steady, o.has) {
		return nil
	}
	if settled == "" {
		settled = filepath.Join(dir, fmt.Sprintf("tick-%d-settled.db", n))
		if err := copyFile(golden, settled); err != nil {
			return err
		}
		if err := settleTick(ctx, w, settled, o.concurrency); err != nil {
			return err
		}
	}
	// The touched scenario rewrites documents, so it goes last.
	for _, scenario := range steady {
		if !o.has(scenario) {
			continue
		}
		progress("%s N=%d", scenario, n)
		// Nothing is written by the tick, so the store mode cannot matter: durable it is.
		fig, err := tickChild(ctx, o, w, nil, dir, settled, storeDurable, n, scenario)
		if err != nil {
			return err
		}
		r.Ticks = append(r.Ticks, fig)
		if err := fig.unchanged(n); err != nil {
			return err
		}
	}
	return nil
}

// unchanged says what is wrong with a tick that was to poll n operations
// and change none.
func (t TickFigures) unchanged(n int) error {
	if t.Result.Polled != n || t.Result.Changed != 0 || t.Result.Errors != 0 {
		return fmt.Errorf("%s: polled %d, changed %d, errors %d; want %d, 0, 0",
			t.Scenario, t.Result.Polled, t.Result.Changed, t.Result.Errors, n)
	}
	return nil
}

// tickChild measures one tick in a child process at the configured
// latency, on the store file at path or, with cw, on the Cosmos server.
func tickChild(ctx context.Context, o options, w *csWorld, cw *cosmosWorld, dir, path, mode string, n int, scenario string) (TickFigures, error) {
	if err := w.setLatency(o.latency); err != nil {
		return TickFigures{}, err
	}
	w.sim.ResetLedger()
	spec := childSpec{Kind: childTick, StorePath: path, NoSync: mode == storeNoSync, CSURL: w.url,
		Concurrency: o.concurrency, BatchSize: o.batchSize,
		CPUProfile: profilePath(o.cpuProfile, fmt.Sprintf("%s-%s-%d", scenario, mode, n)),
		Warm:       scenario == ScenarioTickUnchanged || scenario == ScenarioTickOnePercent}
	if scenario == ScenarioTickOnePercent {
		spec.Touch = max(1, n/100)
	}
	rounds := 1
	if spec.Warm {
		spec.Rounds, rounds = o.rounds, o.rounds
	}
	if cw != nil {
		spec.Cosmos = &cw.cfg
	}
	// The view's first tick reads the change feed from the start of the
	// current second (to find its end), and seeding has just written every
	// document: starting in a new second keeps that out of the figures, as
	// it is in a region whose documents were not all written a moment ago.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	res, simCPU, err := spawnMeasured(ctx, spec, dir)
	if err != nil {
		return TickFigures{}, err
	}
	// The simulator's ledger and CPU time cover every round: a round's
	// share is theirs over the rounds.
	led := w.sim.Ledger()
	lists := led.ListCalls()
	per := float64(rounds)
	simCPU /= time.Duration(rounds)
	bound := time.Duration(float64(led.Total())/per) * o.latency / time.Duration(o.concurrency)
	fig := TickFigures{
		Scenario: scenario, Store: mode, N: n, Concurrency: o.concurrency,
		WallMS: ms(res.Wall), BoundMS: ms(bound),
		CPUPerOpUS:           us(res.User+res.Sys) / float64(n),
		SimCPUPerOpUS:        us(simCPU) / float64(n),
		UserMS:               ms(res.User),
		SysMS:                ms(res.Sys),
		ReadsPerOp:           float64(res.Store.Reads()) / float64(n),
		WritesPerOp:          float64(res.Store.Writes()) / float64(n),
		StoreRoundTripsPerOp: float64(res.Store.RoundTrips()) / float64(n),
		StoreHTTPPerOp:       float64(res.StoreHTTP) / float64(n),
		// Every request the simulator saw during the child came from it.
		CSRequestsPerOp: float64(led.Total()) / per / float64(n),
		CSBatchSize:     o.batchSize,
		CSLists:         ListStats{Calls: int(float64(lists.Calls) / per), MaxIDs: lists.MaxIDs},
		PeakHeapMB:      float64(res.PeakHeap) / (1 << 20),
		AllocPerOpB:     float64(res.Allocated) / float64(n),
		GCs:             res.GCs,
		PeakRSSMB:       float64(res.MaxRSS) / (1 << 20),
		StoreMapRSSMB:   float64(res.StoreMapRSS) / (1 << 20),
		RusageMaxRSSMB:  float64(res.RusageMaxRSS) / (1 << 20),
		Result:          res.Tick,
		StoreCounts:     res.Store,
		CSRequests:      led.ByPattern,
		Touched:         res.Touched,
	}
	for _, c := range res.RoundCPU {
		fig.RoundCPUPerOpUS = append(fig.RoundCPUPerOpUS, us(c)/float64(n))
	}
	fig.docs(res, n)
	if lists.Calls > 0 {
		fig.CSLists.IDsPerCall = float64(lists.IDs) / float64(lists.Calls)
	}
	if bound > 0 {
		fig.Ratio = float64(res.Wall) / float64(bound)
	}
	return fig, nil
}

// runCosmosTick measures the unchanged tick on the Cosmos test server. The
// n settled cluster creates are made as for the embedded ticks (frontend,
// CS POSTs, one tick) in a scratch embedded store and then copied into
// Cosmos document by document: the test server is too slow at a tick's
// writes for the settling tick to run there at N=10,000.
func runCosmosTick(ctx context.Context, o options, dir string, n int, r *Report, progress func(string, ...any)) error {
	w, err := newCSWorld(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	golden := filepath.Join(dir, fmt.Sprintf("cosmos-%d.db", n))
	progress("seeding %d dispatched cluster creates for Cosmos", n)
	if err := prepareTick(ctx, w, golden, n, o.concurrency, progress); err != nil {
		return err
	}
	if err := settleTick(ctx, w, golden, o.concurrency); err != nil {
		return err
	}
	progress("starting the Cosmos test server")
	cw, err := newCosmosWorld(ctx)
	if err != nil {
		return err
	}
	defer cw.close()
	t0 := time.Now()
	copied, err := copyToCosmos(ctx, golden, cw)
	if err != nil {
		return err
	}
	progress("copied %d documents to Cosmos in %s", copied, time.Since(t0).Round(time.Millisecond))
	progress("%s N=%d on the Cosmos test server", ScenarioTickCosmos, n)
	fig, err := tickChild(ctx, o, w, cw, dir, "", storeCosmos, n, ScenarioTickCosmos)
	if err != nil {
		return err
	}
	r.Ticks = append(r.Ticks, fig)
	return fig.unchanged(n)
}

// copyToCosmos creates every live document of the embedded store at path
// in the Cosmos world's database, 32 at a time.
func copyToCosmos(ctx context.Context, path string, cw *cosmosWorld) (int, error) {
	src, err := openStore(path, true)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	items, _, err := readFeed(ctx, src, "")
	if err != nil {
		return 0, err
	}
	dst, err := cw.open()
	if err != nil {
		return 0, err
	}
	defer dst.Close()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(items) || ctx.Err() != nil {
					return
				}
				var d struct {
					PartitionKey string `json:"partitionKey"`
				}
				if err := json.Unmarshal(items[k].Body, &d); err != nil {
					errs[i] = fmt.Errorf("seeded document %d: %w", k, err)
					return
				}
				if _, err := dst.Create(ctx, d.PartitionKey, items[k].Body); err != nil {
					errs[i] = fmt.Errorf("copying document %d to Cosmos: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return len(items), ctx.Err()
}

// runDispatch sends dispatchOps new cluster creates through
// /dispatchOperations on a fresh simulator.
func runDispatch(ctx context.Context, o options, dir, mode string) (DispatchFigures, error) {
	w, err := newCSWorld(ctx)
	if err != nil {
		return DispatchFigures{}, err
	}
	defer w.close()
	path := filepath.Join(dir, "dispatch-"+mode+".db")
	if err := prepareDispatch(ctx, path, o.dispatchOps); err != nil {
		return DispatchFigures{}, err
	}
	if err := w.setLatency(o.latency); err != nil {
		return DispatchFigures{}, err
	}
	w.sim.ResetLedger()
	spec := childSpec{Kind: childDispatch, StorePath: path, NoSync: mode == storeNoSync, CSURL: w.url,
		Concurrency: o.concurrency, BatchOps: o.batchOps, CPUProfile: profilePath(o.cpuProfile, "dispatch-"+mode)}
	res, simCPU, err := spawnMeasured(ctx, spec, dir)
	if err != nil {
		return DispatchFigures{}, err
	}
	led := w.sim.Ledger()
	posts := 0
	for k, v := range led.ByPattern {
		if strings.HasPrefix(k, "POST ") {
			posts += v
		}
	}
	ops := float64(res.Operations)
	d := DispatchFigures{
		Store: mode, Operations: res.Operations, Batches: len(res.BatchWall), OpsPerBatch: o.batchOps,
		BatchP50MS: ms(percentile(res.BatchWall, 0.5)), BatchP90MS: ms(percentile(res.BatchWall, 0.9)),
		BatchMaxMS: ms(percentile(res.BatchWall, 1)), Dispatched: res.Dispatched,
		CSPostsPerOp: float64(posts) / ops, CSRequestsPerOp: float64(led.Total()) / ops,
		ReadsPerOp: float64(res.Store.Reads()) / ops, WritesPerOp: float64(res.Store.Writes()) / ops,
		CPUPerOpUS: us(res.User+res.Sys) / ops, SimCPUPerOpUS: us(simCPU) / ops, PeakRSSMB: float64(res.MaxRSS) / (1 << 20),
		RusageMaxRSSMB: float64(res.RusageMaxRSS) / (1 << 20),
		StoreCounts:    res.Store, CSRequests: led.ByPattern,
	}
	if len(res.BatchWall) > 0 {
		d.DocsPerBatch = float64(res.Documents) / float64(len(res.BatchWall))
	}
	if res.Wall > 0 {
		d.OpsPerSecond = ops / res.Wall.Seconds()
	}
	if res.Operations != o.dispatchOps || res.Dispatched != o.dispatchOps || posts != o.dispatchOps {
		return d, fmt.Errorf("sent %d operations, %d recorded a CS cluster, CS saw %d POSTs; want %d of each",
			res.Operations, res.Dispatched, posts, o.dispatchOps)
	}
	return d, nil
}

// runColdStart builds the shipped binary (unless given one) and starts it.
func runColdStart(ctx context.Context, o options, dir string) (*ColdStartFigures, error) {
	w, err := newCSWorld(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	bin := o.binary
	var stripped, unstripped int64
	if bin == "" {
		bdir := filepath.Join(dir, "bin")
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			return nil, err
		}
		if bin, stripped, unstripped, err = buildBinaries(ctx, o.goCmd, o.src, bdir); err != nil {
			return nil, err
		}
	}
	fig, err := measureColdStart(ctx, bin, w.url, dir, o.coldRuns)
	if err != nil {
		return nil, err
	}
	fig.StrippedBytes, fig.UnstrippedBytes = stripped, unstripped
	return fig, nil
}

// spawnMeasured runs a child and also returns this process's CPU time
// meanwhile, which is the simulator serving it (the parent does nothing
// else). It includes the child's start-up requests, of which there are none.
func spawnMeasured(ctx context.Context, spec childSpec, dir string) (childResult, time.Duration, error) {
	u0, err := readUsage()
	if err != nil {
		return childResult{}, 0, err
	}
	res, err := spawn(ctx, spec, dir)
	if err != nil {
		return childResult{}, 0, err
	}
	u1, err := readUsage()
	if err != nil {
		return childResult{}, 0, err
	}
	return res, u1.cpu() - u0.cpu(), nil
}
