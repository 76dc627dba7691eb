package benchmark

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/activeset"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/events"
	dispatchoperations "github.com/hcpops/hcpops/functions/dispatchOperations"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/store/counting"
)

// childEnv names the spec file of a measuring child. Each measured
// scenario runs in a child process of the same binary so that its CPU time
// and peak RSS are its own: maxrss never goes down, and the simulator and
// the seeding stay in the parent.
const childEnv = "HCPOPS_BENCH_CHILD"

// Scenario kinds a child runs.
const (
	childTick     = "tick"
	childDispatch = "dispatch"
)

type childSpec struct {
	Kind        string `json:"kind"`
	StorePath   string `json:"store_path"`
	NoSync      bool   `json:"no_sync"`
	CSURL       string `json:"cs_url"`
	Concurrency int    `json:"concurrency"`
	BatchSize   int    `json:"batch_size"`
	BatchOps    int    `json:"batch_ops"`
	CPUProfile  string `json:"cpu_profile"`
	// Warm runs the process's first tick (the full read that builds the
	// view of the active set) before the one measured; Touch operations
	// and their clusters are then rewritten by another writer.
	Warm  bool `json:"warm,omitempty"`
	Touch int  `json:"touch,omitempty"`
	// Rounds is how many times a warm tick is measured (the Touch
	// operations rewritten again before each): the result is the round
	// of median CPU time, with every round's CPU time beside it.
	Rounds int `json:"rounds,omitempty"`
	// Cosmos, when set, is the store instead of the file at StorePath.
	Cosmos *cosmos.Config `json:"cosmos,omitempty"`
}

type childResult struct {
	Wall   time.Duration `json:"wall"`
	User   time.Duration `json:"user"`
	Sys    time.Duration `json:"sys"`
	MaxRSS int64         `json:"max_rss"`
	// RusageMaxRSS is getrusage's figure, inflated by the parent; see usage.
	RusageMaxRSS int64 `json:"rusage_max_rss"`
	// PeakHeap is the Go heap in use at its highest (see heapMetrics),
	// over every round.
	PeakHeap uint64 `json:"peak_heap"`
	// RoundCPU is each measured round's CPU time (user and system).
	RoundCPU []time.Duration `json:"round_cpu,omitempty"`
	// Allocated is what the measured work allocated on the Go heap and
	// GCs the collections it ran: with the live heap they set the peak.
	Allocated uint64 `json:"allocated"`
	GCs       uint64 `json:"gcs"`
	// StoreMapRSS is the store file's resident part at the end (embedded).
	StoreMapRSS int64 `json:"store_map_rss"`
	// StoreHTTP counts the Cosmos store's HTTP attempts (Cosmos only).
	StoreHTTP int64                `json:"store_http"`
	Store     counting.Counts      `json:"store"`
	Tick      lifecycle.TickResult `json:"tick"`
	// FirstTick is what the warm-up tick read: a full read, as a relist.
	FirstTick *counting.Counts `json:"first_tick,omitempty"`
	Touched   int              `json:"touched,omitempty"`
	// ViewHeap is the live Go heap the warm-up tick left behind (after a
	// collection, less the one before it): the view of the active set;
	// View what the view says it holds.
	ViewHeap int64           `json:"view_heap,omitempty"`
	View     activeset.Stats `json:"view"`
	// dispatch only
	BatchWall  []time.Duration `json:"batch_wall"`
	Documents  int             `json:"documents"`
	Operations int             `json:"operations"`
	Dispatched int             `json:"dispatched"`
}

// spawn runs spec in a child process: this same executable and command
// line, told by childEnv to measure instead.
func spawn(ctx context.Context, spec childSpec, dir string) (childResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return childResult{}, fmt.Errorf("finding this executable: %w", err)
	}
	f, err := os.CreateTemp(dir, "child-*.json")
	if err != nil {
		return childResult{}, fmt.Errorf("writing child spec: %w", err)
	}
	if err := json.NewEncoder(f).Encode(spec); err != nil {
		f.Close()
		return childResult{}, fmt.Errorf("writing child spec: %w", err)
	}
	f.Close()
	cmd := exec.CommandContext(ctx, exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+f.Name())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return childResult{}, fmt.Errorf("%s child: %w: %s", spec.Kind, err, tail(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res childResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return childResult{}, fmt.Errorf("%s child printed no result: %w: %s", spec.Kind, err, tail(stdout.String()+stderr.String()))
	}
	return res, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// runChild is a child's whole life: read the spec, measure, print the
// result as the last line of stdout.
func runChild(ctx context.Context, specPath string, stdout io.Writer) error {
	b, err := os.ReadFile(specPath)
	if err != nil {
		return fmt.Errorf("reading child spec: %w", err)
	}
	var spec childSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("child spec %s: %w", specPath, err)
	}
	var s store.Store
	var requests requestCounter
	if spec.Cosmos != nil {
		s, err = cosmos.New(*spec.Cosmos, cosmos.WithLogger(discardLogger()), cosmos.WithPerTryPolicy(&requests))
	} else {
		s, err = openStore(spec.StorePath, spec.NoSync)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := assemble(ctx, s, spec.CSURL, spec.Concurrency, spec.BatchSize)
	if err != nil {
		return err
	}
	defer a.close()
	var res childResult
	var base counting.Counts
	switch spec.Kind {
	case childTick:
		var warm childResult
		if spec.Warm {
			if warm, err = warmUp(ctx, spec, a, s); err != nil {
				return err
			}
			base = a.counts.Counts()
		}
		res, err = measureRounds(ctx, spec, a, s, base)
		res.FirstTick, res.Touched, res.ViewHeap = warm.FirstTick, warm.Touched, warm.ViewHeap
		res.View = a.app.Engine.ActiveSetStats()
	case childDispatch:
		res, err = childDispatchRun(ctx, spec, a, s)
	default:
		err = fmt.Errorf("child spec kind %q: want %s or %s", spec.Kind, childTick, childDispatch)
	}
	if err != nil {
		return err
	}
	if spec.Kind != childTick {
		res.Store = a.counts.Counts().Minus(base)
	}
	res.StoreHTTP = requests.n.Load()
	if spec.Cosmos == nil {
		if abs, err := filepath.Abs(spec.StorePath); err == nil {
			res.StoreMapRSS = mappedRSS(abs)
		}
	}
	out, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encoding child result: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// warmUp runs the process's first tick, a full read that builds the view
// of the active set, and then has another writer rewrite spec.Touch
// operations and their clusters (a new version of each, as another
// instance's status write makes), straight to raw, uncounted.
func warmUp(ctx context.Context, spec childSpec, a *assembled, raw store.Store) (childResult, error) {
	var res childResult
	before := a.counts.Counts()
	heap0 := liveHeap()
	tr, err := a.app.Engine.Tick(ctx)
	if err != nil {
		return res, fmt.Errorf("warm-up tick: %w", err)
	}
	if tr.Errors != 0 || tr.Changed != 0 {
		return res, fmt.Errorf("warm-up tick: %d errors, %d changed; want an unchanged tick", tr.Errors, tr.Changed)
	}
	res.ViewHeap = int64(liveHeap()) - int64(heap0)
	first := a.counts.Counts().Minus(before)
	res.FirstTick = &first
	if res.Touched, err = touch(ctx, raw, spec.Touch); err != nil {
		return res, err
	}
	// The simulator's ledger then counts only the measured tick.
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimSuffix(spec.CSURL, "/")+"/_sim/ledger", nil)
	if err != nil {
		return res, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return res, fmt.Errorf("resetting the simulator's ledger: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return res, fmt.Errorf("resetting the simulator's ledger: %s", resp.Status)
	}
	return res, nil
}

// measureRounds measures spec.Rounds ticks (one when unset), rewriting
// the Touch operations again before every round after the first, and
// returns the round of median CPU time with its own store counts, the
// highest peak heap and every round's CPU time. One tick's CPU time on a
// shared host varies by a fifth between runs; the median of a few, in
// one seeding, is what a comparison can rest on.
func measureRounds(ctx context.Context, spec childSpec, a *assembled, raw store.Store, base counting.Counts) (childResult, error) {
	var rounds []childResult
	n := 1
	if spec.Warm { // a first tick, or one that changes everything, happens once
		n = max(spec.Rounds, 1)
	}
	for r := range n {
		if r > 0 && spec.Touch > 0 {
			if _, err := touch(ctx, raw, spec.Touch); err != nil {
				return childResult{}, err
			}
			base = a.counts.Counts()
		}
		res, err := measure(spec, func() (childResult, error) {
			tr, err := a.app.Engine.Tick(ctx)
			return childResult{Tick: tr}, err
		})
		if err != nil {
			return childResult{}, err
		}
		after := a.counts.Counts()
		res.Store, base = after.Minus(base), after
		rounds = append(rounds, res)
	}
	cpu := func(r childResult) time.Duration { return r.User + r.Sys }
	sorted := slices.Clone(rounds)
	slices.SortStableFunc(sorted, func(x, y childResult) int { return cmp.Compare(cpu(x), cpu(y)) })
	med := sorted[(len(sorted)-1)/2]
	for _, r := range rounds {
		med.RoundCPU = append(med.RoundCPU, cpu(r))
		med.PeakHeap = max(med.PeakHeap, r.PeakHeap)
	}
	return med, nil
}

// liveHeap is the Go heap's live objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// touch rewrites n of the active operations, spread over the set, and
// their resources, each with its own body under If-Match.
func touch(ctx context.Context, raw store.Store, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	var ops []store.Item
	err := raw.ActiveOperations(ctx, store.ActiveOperationsQuery{}, func(items []store.Item) error {
		ops = append(ops, items...)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("listing operations to touch: %w", err)
	}
	if len(ops) < n {
		return 0, fmt.Errorf("%d operations to touch, only %d active", n, len(ops))
	}
	step := len(ops) / n
	for i := 0; i < n; i++ {
		it := ops[i*step]
		op, err := document.ParseOperation(it.Body)
		if err != nil {
			return 0, fmt.Errorf("touching operation %d: %w", i, err)
		}
		if _, err := raw.Replace(ctx, op.PartitionKey, op.ID, it.Body, it.ETag); err != nil {
			return 0, fmt.Errorf("touching operation %s: %w", op.Name(), err)
		}
		rid := document.CosmosID(op.Properties.ExternalID)
		res, err := raw.Get(ctx, op.PartitionKey, rid)
		if err != nil {
			return 0, fmt.Errorf("touching the resource of %s: %w", op.Name(), err)
		}
		if _, err := raw.Replace(ctx, op.PartitionKey, rid, res.Body, res.ETag); err != nil {
			return 0, fmt.Errorf("touching the resource of %s: %w", op.Name(), err)
		}
	}
	return n, nil
}

// measure times fn and takes its CPU time from getrusage, profiling it
// when asked.
func measure(spec childSpec, fn func() (childResult, error)) (childResult, error) {
	if spec.CPUProfile != "" {
		f, err := os.Create(spec.CPUProfile)
		if err != nil {
			return childResult{}, fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return childResult{}, fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	runtime.GC()
	u0, err := readUsage()
	if err != nil {
		return childResult{}, err
	}
	stopHeap := heapPeak()
	a0 := allocCounts()
	t0 := time.Now()
	res, err := fn()
	res.Wall = time.Since(t0)
	res.PeakHeap = stopHeap()
	a1 := allocCounts()
	res.Allocated, res.GCs = a1.bytes-a0.bytes, a1.gcs-a0.gcs
	u1, uerr := readUsage()
	if err != nil {
		return childResult{}, err
	}
	if uerr != nil {
		return childResult{}, uerr
	}
	res.User, res.Sys, res.MaxRSS, res.RusageMaxRSS = u1.User-u0.User, u1.Sys-u0.Sys, u1.MaxRSS, u1.RusageMaxRSS
	return res, nil
}

// childDispatchRun posts the change feed, in batches of BatchOps new
// operations with their resources, to the real handler over HTTP, exactly
// as the Functions host would, one batch at a time.
func childDispatchRun(ctx context.Context, spec childSpec, a *assembled, raw store.Store) (childResult, error) {
	items, cont, err := readFeed(ctx, raw, "")
	if err != nil {
		return childResult{}, err
	}
	bodies, ops, err := dispatchBodies(items, spec.BatchOps)
	if err != nil {
		return childResult{}, err
	}
	srv, err := a.app.Handler(handlers.Config{})
	if err != nil {
		return childResult{}, fmt.Errorf("building the handler: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return childResult{}, fmt.Errorf("listening: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			fmt.Fprintln(os.Stderr, "bench child: stopping its handler:", err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/" + dispatchoperations.Name
	client := &http.Client{Timeout: 10 * time.Minute}

	res, err := measure(spec, func() (childResult, error) {
		var r childResult
		for i, body := range bodies {
			t0 := time.Now()
			if err := invoke(ctx, client, url, body); err != nil {
				return r, fmt.Errorf("batch %d: %w", i, err)
			}
			r.BatchWall = append(r.BatchWall, time.Since(t0))
		}
		return r, nil
	})
	if err != nil {
		return childResult{}, err
	}
	res.Documents, res.Operations = len(items), ops
	res.Dispatched, err = countRecorded(ctx, raw, cont)
	return res, err
}

// dispatchBodies cuts the feed into invocation bodies of batchOps
// operations each (with the resource documents written beside them).
func dispatchBodies(items []store.Item, batchOps int) ([][]byte, int, error) {
	var bodies [][]byte
	var batch []store.Item
	ops, inBatch := 0, 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		body, err := envelope(batch)
		if err != nil {
			return err
		}
		bodies = append(bodies, body)
		batch, inBatch = nil, 0
		return nil
	}
	for _, it := range items {
		kind, err := document.Sniff(it.Body)
		if err != nil {
			return nil, 0, fmt.Errorf("seeded document: %w", err)
		}
		if kind == document.KindOperation {
			if inBatch == batchOps {
				if err := flush(); err != nil {
					return nil, 0, err
				}
			}
			ops++
			inBatch++
		}
		batch = append(batch, it)
	}
	return bodies, ops, flush()
}

// invoke posts one invocation with the host's headers and insists on 200.
func invoke(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set(events.HeaderInvocationID, uuid.NewString())
	req.Header.Set("User-Agent", "Azure-Functions-Host/"+hostVersion)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("posting invocation: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("invocation answered %d: %s", resp.StatusCode, tail(string(answer)))
	}
	return nil
}

// countRecorded counts resources whose CS cluster ID was recorded after
// continuation: the proof that dispatch did its work.
func countRecorded(ctx context.Context, s store.Store, continuation string) (int, error) {
	items, _, err := readFeed(ctx, s, continuation)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range items {
		if kind, err := document.Sniff(it.Body); err != nil || kind != document.KindCluster {
			continue
		}
		r, err := document.ParseResource(it.Body)
		if err != nil {
			return 0, fmt.Errorf("reading a dispatched resource: %w", err)
		}
		if r.ClusterServiceID() != "" {
			n++
		}
	}
	return n, nil
}

// profilePath names a child's CPU profile after its scenario.
func profilePath(prefix, name string) string {
	if prefix == "" {
		return ""
	}
	ext := filepath.Ext(prefix)
	return strings.TrimSuffix(prefix, ext) + "." + name + orDefault(ext, ".pprof")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
