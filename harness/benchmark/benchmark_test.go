package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	dispatchoperations "github.com/hcpops/hcpops/functions/dispatchOperations"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/localstore"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// testServeEnv makes the test binary act as `hcpops serve` (the main
// package cannot be imported), so the cold-start harness is tested on a
// real handler process.
const testServeEnv = "HCPOPS_BENCH_TEST_SERVE"

// TestMain lets the test binary be the benchmark's child processes, a
// stand-in server, and (`bench.test bench -n ...`) the command itself.
func TestMain(m *testing.M) {
	ctx := context.Background()
	switch {
	case os.Getenv(childEnv) != "":
		exit(Main(ctx, nil, os.Stdout))
	case os.Getenv(testServeEnv) != "":
		exit(testServe(ctx))
	case len(os.Args) > 1 && os.Args[1] == "bench":
		exit(Main(ctx, os.Args[2:], os.Stdout))
	}
	os.Exit(m.Run())
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// testServe is what main's serve does, trimmed: assemble the app from the
// environment and serve until interrupted.
func testServe(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	port, err := handlers.PortFromEnv(os.Getenv, 0)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, os.Getenv, slog.New(slog.DiscardHandler), app.Parts{OpenStore: localstore.Open})
	if err != nil {
		return err
	}
	defer a.Close()
	srv, err := a.Handler(handlers.Config{Port: port})
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// TestQuickRun runs the quick benchmark end to end (all but the cold start,
// which builds the whole binary) and checks the report holds together.
func TestQuickRun(t *testing.T) {
	testsupport.RealStack(t, "the benchmark's scenarios in real time, a child process for the cold start")
	out := filepath.Join(t.TempDir(), "report.json")
	var stdout bytes.Buffer
	args := []string{"-quick", "-scenarios", "tick-first,tick-unchanged,tick-1pct,tick-changed,dispatch,handler", "-handler-iterations", "50",
		"-rounds", "2", "-out", out}
	if err := Main(context.Background(), args, &stdout); err != nil {
		t.Fatalf("bench: %v\n%s", err, stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("report is not well-formed: %v", err)
	}
	const n = 200
	if len(r.Errors) != 0 {
		t.Errorf("errors: %v", r.Errors)
	}
	if r.Config.Concurrency != 64 || r.Config.LatencyMS != 20 || len(r.Config.Ns) != 1 || r.Config.Ns[0] != n {
		t.Errorf("config = %+v", r.Config)
	}

	// One changed tick per store mode, then one unchanged tick.
	var kinds []string
	allocs := map[string]float64{} // bytes allocated per operation, by scenario
	for _, tk := range r.Ticks {
		kinds = append(kinds, tk.Scenario+"/"+tk.Store)
		if tk.N != n || tk.Result.Polled != n || tk.Result.Errors != 0 {
			t.Errorf("%s: N %d polled %d errors %d; every operation must be polled", tk.Scenario, tk.N, tk.Result.Polled, tk.Result.Errors)
		}
		// 200 clusters in 100 subscriptions: two pages, one list each.
		if tk.CSRequestsPerOp > 0.02 || tk.CSLists.Calls != 2 || tk.CSLists.IDsPerCall != 100 || tk.CSBatchSize != 100 {
			t.Errorf("%s: %.3f CS requests per operation, lists %+v at batch size %d; want 2 lists of 100 ids",
				tk.Scenario, tk.CSRequestsPerOp, tk.CSLists, tk.CSBatchSize)
		}
		// A full read: one ReadMany per page; after it, the view answers.
		wantReadManys, wantDocs := int64(2), 2.0
		switch tk.Scenario {
		case ScenarioTickUnchanged:
			wantReadManys, wantDocs = 0, 0
		case ScenarioTickOnePercent:
			wantReadManys, wantDocs = 0, 0.02 // 2 operations and their clusters, from the feed
		}
		if tk.StoreCounts.ReadManys != wantReadManys || tk.StoreCounts.Gets != 0 {
			t.Errorf("%s: %d ReadMany calls and %d point reads; want %d and none",
				tk.Scenario, tk.StoreCounts.ReadManys, tk.StoreCounts.Gets, wantReadManys)
		}
		if docs := float64(tk.StoreCounts.DocsRead()) / n; tk.DocsPerOp != docs || tk.DocsPerOp != wantDocs {
			t.Errorf("%s: %.4f documents read per operation (counts say %.4f), want %.4f", tk.Scenario, tk.DocsPerOp, docs, wantDocs)
		}
		if warm := tk.Scenario == ScenarioTickUnchanged || tk.Scenario == ScenarioTickOnePercent; warm {
			// The relist's full read, a 180th of it at 30 minutes, less on
			// the mean jittered interval.
			if tk.FullReadDocsPerOp != 2 || math.Abs(tk.StrictDocsPerOp-(wantDocs+2.0/180)) > 1e-9 ||
				math.Abs(tk.AmortizedDocsPerOp-(wantDocs+2.0/180/1.15)) > 1e-9 {
				t.Errorf("%s: full read %.4f, amortized %.4f, strict %.4f docs/op", tk.Scenario, tk.FullReadDocsPerOp,
					tk.AmortizedDocsPerOp, tk.StrictDocsPerOp)
			}
			if got, want := tk.RUPerSecond, tk.AmortizedDocsPerOp*n/10; math.Abs(got-want) > 1e-9 {
				t.Errorf("%s: %.3f RU/s, want %.3f", tk.Scenario, got, want)
			}
		}
		if tk.WallMS < 20 || tk.WallMS < tk.BoundMS || tk.BoundMS != 2*20.0/64 {
			t.Errorf("%s: wall %.1f ms under the bound %.1f ms: the latency is not applied", tk.Scenario, tk.WallMS, tk.BoundMS)
		}
		// Warm ticks are measured in two rounds (-rounds 2), the others once;
		// the figures are the round of median CPU, the lower of two.
		wantRounds := 1
		if tk.Scenario == ScenarioTickUnchanged || tk.Scenario == ScenarioTickOnePercent {
			wantRounds = 2
		}
		if len(tk.RoundCPUPerOpUS) != wantRounds || tk.CPUPerOpUS != slices.Min(tk.RoundCPUPerOpUS) {
			t.Errorf("%s: cpu %.2f µs/op, rounds %v; want %d rounds and the median's (the lower's) cpu", tk.Scenario,
				tk.CPUPerOpUS, tk.RoundCPUPerOpUS, wantRounds)
		}
		if tk.AllocPerOpB <= 0 {
			t.Errorf("%s: %.0f bytes allocated per operation: the heap's counters not read", tk.Scenario, tk.AllocPerOpB)
		}
		allocs[tk.Scenario] = tk.AllocPerOpB
		if tk.CPUPerOpUS <= 0 || tk.PeakRSSMB <= 0 {
			t.Errorf("%s: cpu %.1f µs/op, rss %.1f MB: getrusage not read", tk.Scenario, tk.CPUPerOpUS, tk.PeakRSSMB)
		}
		if tk.PeakHeapMB <= 0 || tk.PeakHeapMB > tk.PeakRSSMB || tk.StoreMapRSSMB <= 0 || tk.StoreMapRSSMB > tk.PeakRSSMB {
			t.Errorf("%s: heap %.1f MB, store map %.1f MB, RSS %.1f MB: want both above 0 and within RSS",
				tk.Scenario, tk.PeakHeapMB, tk.StoreMapRSSMB, tk.PeakRSSMB)
		}
		if trips := float64(tk.StoreCounts.RoundTrips()) / n; tk.StoreRoundTripsPerOp != trips || trips <= 0 {
			t.Errorf("%s: %.3f store round trips/op, counts say %.3f", tk.Scenario, tk.StoreRoundTripsPerOp, trips)
		}
		switch tk.Scenario {
		case ScenarioTickFirst, ScenarioTickUnchanged, ScenarioTickOnePercent:
			if w := tk.StoreCounts.Writes(); w != 0 || tk.Result.Changed != 0 {
				t.Errorf("unchanged tick wrote %d times, changed %d", w, tk.Result.Changed)
			}
		case ScenarioTickChanged:
			if tk.Result.Changed != n || tk.StoreCounts.Batches != n || tk.WritesPerOp != 1 {
				t.Errorf("changed tick: changed %d, %d batches, %.2f writes/op; want one batch each",
					tk.Result.Changed, tk.StoreCounts.Batches, tk.WritesPerOp)
			}
		}
	}
	// Writing every operation and its resource allocates more than a tick
	// that writes nothing: the figure is the tick's own.
	if allocs[ScenarioTickChanged] <= allocs[ScenarioTickUnchanged] {
		t.Errorf("changed tick allocated %.0f bytes an operation, unchanged %.0f: want more for the changed",
			allocs[ScenarioTickChanged], allocs[ScenarioTickUnchanged])
	}
	if got := strings.Join(kinds, " "); got != "tick-changed/durable tick-changed/nosync tick-first/durable tick-unchanged/durable tick-1pct/durable" {
		t.Errorf("ticks = %s", got)
	}

	if len(r.Dispatch) != 2 {
		t.Fatalf("%d dispatch runs, want one per store mode", len(r.Dispatch))
	}
	for _, d := range r.Dispatch {
		if d.Operations != n || d.Dispatched != n || d.Batches != n/100 || d.CSPostsPerOp != 1 {
			t.Errorf("dispatch %s: %d ops, %d dispatched, %d batches, %.2f POSTs/op", d.Store, d.Operations, d.Dispatched, d.Batches, d.CSPostsPerOp)
		}
		if d.BatchP50MS <= 0 || d.OpsPerSecond <= 0 || d.DocsPerBatch != 200 {
			t.Errorf("dispatch %s: p50 %.1f ms, %.0f ops/s, %.0f docs/batch", d.Store, d.BatchP50MS, d.OpsPerSecond, d.DocsPerBatch)
		}
	}

	h := r.Handler
	if h == nil || h.Documents != 100 || h.Recorded != 100*101 || h.InProcessUS <= 0 || h.HTTPMeanUS <= 0 {
		t.Errorf("handler = %+v", h)
	}

	found := false
	for _, tg := range r.Targets {
		if tg.Name == "store writes when nothing changed" {
			found = true
			if !tg.Pass || tg.Value != 0 {
				t.Errorf("target %+v", tg)
			}
		}
	}
	if !found {
		t.Errorf("no zero-writes target in %+v", r.Targets)
	}
	for _, want := range []string{"poll tick", "dispatch through", "handler overhead", "targets", "PASS", "report written to"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestColdStart measures a real handler process (this test binary acting
// as hcpops serve) and a binary that dies at once.
func TestColdStart(t *testing.T) {
	testsupport.RealStack(t, "the test binary as a server child process")
	ctx := context.Background()
	w, err := newCSWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fig, err := measureColdStart(ctx, exe, w.url, t.TempDir(), 3, testServeEnv+"=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cold start of the test binary as a server: %+v", fig)
	if len(fig.SamplesMS) != 3 || fig.MinMS <= 0 || fig.MinMS > fig.MedianMS || fig.MedianMS > fig.MaxMS {
		t.Errorf("figures = %+v", fig)
	}
	_, err = measureColdStart(ctx, exe, w.url, t.TempDir(), 1, testServeEnv+"=1", childEnv+"=/nonexistent")
	if err == nil || !strings.Contains(err.Error(), "exited before answering") {
		t.Errorf("a server that dies: err = %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
		check   func(options) bool
	}{
		{nil, "", func(o options) bool {
			return len(o.ns) == 3 && o.ns[2] == 100000 && o.changedMaxN == 10000 && o.cosmosN == 10000 &&
				o.batchSize == 100 && len(o.scenarios) == 8 && len(o.storeModes) == 2
		}},
		{[]string{"-quick"}, "", func(o options) bool {
			return len(o.ns) == 1 && o.ns[0] == 200 && o.dispatchOps == 200 && o.cosmosN == 200
		}},
		{[]string{"-batch-size", "1", "-changed-max-n", "500"}, "", func(o options) bool { return o.batchSize == 1 && o.changedMaxN == 500 }},
		{[]string{"-batch-size", "0"}, "-batch-size=0: want 1 to 200", nil},
		{[]string{"-rounds", "3"}, "", func(o options) bool { return o.rounds == 3 }},
		{[]string{}, "", func(o options) bool { return o.rounds == 1 }},
		{[]string{"-rounds", "0"}, "-rounds=0: want 1 to 100", nil},
		{[]string{"-batch-size", "201"}, "-batch-size=201", nil},
		{[]string{"-cosmos-n", "0"}, "-cosmos-n=0: want at least 1", nil},
		{[]string{"-quick", "-n", "300"}, "", func(o options) bool { return o.ns[0] == 300 }},
		{[]string{"-n", "10000, 1000,1000"}, "", func(o options) bool { return len(o.ns) == 2 && o.ns[0] == 1000 }},
		{[]string{"-scenarios", "handler,DISPATCH"}, "", func(o options) bool { return o.has(ScenarioDispatch) && !o.has(ScenarioColdStart) }},
		{[]string{"-store", "both"}, "", func(o options) bool { return len(o.storeModes) == 2 }},
		{[]string{"-n", "10k"}, `-n="10k": "10k" is not a positive whole number`, nil},
		{[]string{"-n", "0"}, `"0" is not a positive`, nil},
		{[]string{"-scenarios", "tick"}, `-scenarios="tick": unknown "tick"`, nil},
		{[]string{"-store", "fast"}, `-store="fast": unknown "fast"`, nil},
		{[]string{"-concurrency", "0"}, "-concurrency=0: want at least 1", nil},
		{[]string{"-latency", "-1ms"}, "-latency=-1ms", nil},
		{[]string{"extra"}, "unexpected arguments", nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			o, err := parseFlags(tt.args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Errorf("options = %+v", o)
			}
		})
	}
}

// TestEnvelope: the payload is what the host sends, double-encoded, and
// the real decoder gets every document back byte for byte (compacted).
func TestEnvelope(t *testing.T) {
	items := []store.Item{
		{Body: []byte(`{"id": "a", "x": "<&> \"quoted\" back\\slash é"}`)},
		{Body: []byte(`{"id":"b","n":[1,2,{"y":null}]}`)},
	}
	body, err := envelope(items)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte(`\u003c`)) {
		t.Errorf("HTML-escaped payload: %s", body)
	}
	var env struct {
		Data     map[string]json.RawMessage
		Metadata struct{ Sys map[string]string }
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	raw := env.Data[dispatchoperations.BindingName]
	var once string
	if err := json.Unmarshal(raw, &once); err != nil || !strings.HasPrefix(once, `"[`) {
		t.Fatalf("Data.documents is not a string holding a string: %.40s (%v)", raw, err)
	}
	docs, err := events.DecodeDocuments("Data.documents", raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(items) {
		t.Fatalf("%d documents back, want %d", len(docs), len(items))
	}
	for i, d := range docs {
		var want bytes.Buffer
		_ = json.Compact(&want, items[i].Body)
		if string(d) != want.String() {
			t.Errorf("document %d = %s, want %s", i, d, want.String())
		}
	}
	if env.Metadata.Sys["MethodName"] != dispatchoperations.Name || env.Metadata.Sys["RandGuid"] == "" {
		t.Errorf("Metadata.sys = %v", env.Metadata.Sys)
	}
}

// TestCosmosTick runs the Cosmos scenario small: the tick on the Cosmos
// test server, with the store's HTTP requests counted on the wire.
func TestCosmosTick(t *testing.T) {
	testsupport.RealStack(t, "node and the Cosmos-compatible test server")
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(cosmostest.EnvSkip) != "1" {
				t.Fatalf("%s is not installed (%v); install it, or set %s=1 to skip the Cosmos DB tests", tool, err, cosmostest.EnvSkip)
			}
			t.Skipf("*** SKIPPING COSMOS DB TEST (%s=1): %s is not installed ***", cosmostest.EnvSkip, tool)
		}
	}
	out := filepath.Join(t.TempDir(), "report.json")
	var stdout bytes.Buffer
	const n = 100
	args := []string{"-quick", "-scenarios", "tick-cosmos", "-cosmos-n", strconv.Itoa(n), "-out", out}
	if err := Main(context.Background(), args, &stdout); err != nil {
		t.Fatalf("bench: %v\n%s", err, stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Ticks) != 1 {
		t.Fatalf("%d ticks, want the one Cosmos tick:\n%s", len(r.Ticks), stdout.String())
	}
	tk := r.Ticks[0]
	if tk.Scenario != ScenarioTickCosmos || tk.Store != storeCosmos || tk.N != n || tk.Result.Polled != n ||
		tk.Result.Changed != 0 || tk.Result.Errors != 0 {
		t.Errorf("cosmos tick = %s/%s N %d result %+v", tk.Scenario, tk.Store, tk.N, tk.Result)
	}
	// At least the query and whatever reads the resources, all counted.
	if tk.StoreHTTPPerOp <= 0 || tk.StoreRoundTripsPerOp <= 0 || tk.StoreCounts.Writes() != 0 {
		t.Errorf("cosmos tick: %.3f HTTP/op, %.3f trips/op, %d writes", tk.StoreHTTPPerOp, tk.StoreRoundTripsPerOp, tk.StoreCounts.Writes())
	}
}
