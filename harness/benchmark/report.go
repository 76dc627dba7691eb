package benchmark

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/store/counting"
	"github.com/hcpops/hcpops/logging"
)

// Report is everything one run measured; it is printed as a table and
// written as JSON for comparison between runs.
type Report struct {
	Started   time.Time         `json:"started"`
	Seconds   float64           `json:"seconds"`
	Host      HostInfo          `json:"host"`
	Config    RunConfig         `json:"config"`
	Ticks     []TickFigures     `json:"ticks"`
	Dispatch  []DispatchFigures `json:"dispatch"`
	Handler   *HandlerFigures   `json:"handler,omitempty"`
	ColdStart *ColdStartFigures `json:"cold_start,omitempty"`
	Targets   []Target          `json:"targets"`
	Errors    []string          `json:"errors"`
}

// HostInfo says what the figures were measured on; the load matters on a
// shared machine.
type HostInfo struct {
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

// RunConfig echoes the flags.
type RunConfig struct {
	Ns            []int    `json:"n"`
	CosmosN       int      `json:"cosmos_n"`
	BatchSize     int      `json:"batch_size"`
	Concurrency   int      `json:"concurrency"`
	LatencyMS     float64  `json:"latency_ms"`
	Quick         bool     `json:"quick"`
	Scenarios     []string `json:"scenarios"`
	StoreModes    []string `json:"store_modes"`
	DispatchOps   int      `json:"dispatch_ops"`
	BatchOps      int      `json:"batch_ops"`
	ColdStartRuns int      `json:"cold_start_runs"`
}

// TickFigures is one measured poll tick.
type TickFigures struct {
	Scenario    string  `json:"scenario"`
	Store       string  `json:"store"`
	N           int     `json:"n"`
	Concurrency int     `json:"concurrency"`
	WallMS      float64 `json:"wall_ms"`
	// BoundMS is the CS requests made x latency / concurrency: no tick
	// that made them can be faster (N x latency / concurrency before
	// batching, when every operation made one).
	BoundMS float64 `json:"bound_ms"`
	// Ratio is the wall time as a multiple of BoundMS ("× bound").
	Ratio      float64 `json:"ratio"`
	CPUPerOpUS float64 `json:"cpu_per_op_us"`
	// SimCPUPerOpUS is the parent's CPU meanwhile: the CS simulator serving
	// the child, which competes with it for the same cores (with a warm-up
	// tick before the measured one, both ticks').
	SimCPUPerOpUS float64 `json:"sim_cpu_per_op_us"`
	UserMS        float64 `json:"user_ms"`
	SysMS         float64 `json:"sys_ms"`
	// ReadsPerOp counts point reads; query pages are in Store.
	ReadsPerOp  float64 `json:"store_reads_per_op"`
	WritesPerOp float64 `json:"store_writes_per_op"`
	// StoreRoundTripsPerOp is counting.Counts.RoundTrips per polled operation;
	// StoreHTTPPerOp the HTTP requests the Cosmos store sent (Cosmos only).
	StoreRoundTripsPerOp float64 `json:"store_round_trips_per_op"`
	StoreHTTPPerOp       float64 `json:"store_http_requests_per_op,omitempty"`
	// DocsPerOp is the documents the tick read from the store
	// (counting.Counts.DocsRead) per polled operation. After a process's
	// first tick the view of the active set is rebuilt by a full read
	// every relist interval: FullReadDocsPerOp is what the first tick
	// read, and AmortizedDocsPerOp adds its share of one tick
	// (TickPeriod / the mean relist interval, jitter included);
	// StrictDocsPerOp is the same at the relist interval without jitter.
	DocsPerOp          float64 `json:"docs_per_op"`
	FullReadDocsPerOp  float64 `json:"full_read_docs_per_op,omitempty"`
	AmortizedDocsPerOp float64 `json:"amortized_docs_per_op"`
	StrictDocsPerOp    float64 `json:"strict_amortized_docs_per_op"`
	// RUPerSecond estimates the Cosmos DB request units the poll holds at
	// this N: AmortizedDocsPerOp x N per TickPeriod, at 1 RU a document.
	RUPerSecond float64 `json:"ru_per_second"`
	// Touched is how many operations (and their clusters) another writer
	// rewrote before the tick.
	Touched int `json:"touched,omitempty"`
	// ViewHeapPerOpB is the live Go heap the first tick left behind per
	// operation (its view of the active set), ViewRecordPerOpB what the
	// view's records (compressed documents) take of it.
	ViewHeapPerOpB   float64 `json:"view_heap_per_op_bytes,omitempty"`
	ViewRecordPerOpB float64 `json:"view_record_per_op_bytes,omitempty"`
	CSRequestsPerOp  float64 `json:"cs_requests_per_op"`
	// CSBatchSize is the CS batch size the tick ran with; CSLists what the
	// simulator's ledger saw of list calls and the ids they named.
	CSBatchSize int       `json:"cs_batch_size"`
	CSLists     ListStats `json:"cs_lists"`
	// PeakHeapMB is the Go heap in use at its peak (runtime/metrics);
	// PeakRSSMB adds everything else resident, StoreMapRSSMB being the
	// embedded store's memory-mapped file.
	PeakHeapMB float64 `json:"peak_heap_mb"`
	// AllocPerOpB is what the tick allocated per operation and GCs the
	// collections it ran: the peak is the live heap plus what was
	// allocated since the last collection.
	AllocPerOpB float64 `json:"alloc_per_op_bytes"`
	GCs         uint64  `json:"gcs"`
	// RoundCPUPerOpUS is every measured round's CPU per operation, with
	// -rounds: the figures above are the median round's, but the peak
	// heap, which is the highest of them.
	RoundCPUPerOpUS []float64            `json:"round_cpu_per_op_us,omitempty"`
	PeakRSSMB       float64              `json:"peak_rss_mb"`
	StoreMapRSSMB   float64              `json:"store_map_rss_mb"`
	RusageMaxRSSMB  float64              `json:"rusage_maxrss_mb"`
	Result          lifecycle.TickResult `json:"result"`
	StoreCounts     counting.Counts      `json:"store_counts"`
	CSRequests      map[string]int       `json:"cs_requests"`
}

// TickPeriod is pollOperations' timer schedule (*/10 * * * * *).
const TickPeriod = 10 * time.Second

// meanRelistFactor is the relist interval's mean over its base: each
// interval gets 0 to 30% more (activeset's jitter, as ARO-HCP's).
const meanRelistFactor = 1.15

// docs fills in the documents read per operation from the child's counts.
func (t *TickFigures) docs(res childResult, n int) {
	per := func(c counting.Counts) float64 { return float64(c.DocsRead()) / float64(n) }
	t.DocsPerOp = per(res.Store)
	t.AmortizedDocsPerOp, t.StrictDocsPerOp = t.DocsPerOp, t.DocsPerOp
	if res.FirstTick != nil {
		t.FullReadDocsPerOp = per(*res.FirstTick)
		share := float64(TickPeriod) / float64(lifecycle.DefaultRelistInterval)
		t.AmortizedDocsPerOp += t.FullReadDocsPerOp * share / meanRelistFactor
		t.StrictDocsPerOp += t.FullReadDocsPerOp * share
	}
	t.RUPerSecond = t.AmortizedDocsPerOp * float64(n) / TickPeriod.Seconds()
	if res.FirstTick != nil {
		t.ViewHeapPerOpB = float64(res.ViewHeap) / float64(n)
		t.ViewRecordPerOpB = float64(res.View.Bytes) / float64(n)
	}
}

// ListStats is the simulator ledger's account of CS list calls.
type ListStats struct {
	Calls      int     `json:"calls"`
	IDsPerCall float64 `json:"ids_per_call"`
	MaxIDs     int     `json:"max_ids"`
}

// DispatchFigures is a run of change-feed batches through the handler.
type DispatchFigures struct {
	Store           string          `json:"store"`
	Operations      int             `json:"operations"`
	Batches         int             `json:"batches"`
	OpsPerBatch     int             `json:"ops_per_batch"`
	DocsPerBatch    float64         `json:"docs_per_batch"`
	BatchP50MS      float64         `json:"batch_p50_ms"`
	BatchP90MS      float64         `json:"batch_p90_ms"`
	BatchMaxMS      float64         `json:"batch_max_ms"`
	OpsPerSecond    float64         `json:"ops_per_second"`
	Dispatched      int             `json:"dispatched"`
	CSPostsPerOp    float64         `json:"cs_posts_per_op"`
	CSRequestsPerOp float64         `json:"cs_requests_per_op"`
	ReadsPerOp      float64         `json:"store_reads_per_op"`
	WritesPerOp     float64         `json:"store_writes_per_op"`
	CPUPerOpUS      float64         `json:"cpu_per_op_us"`
	SimCPUPerOpUS   float64         `json:"sim_cpu_per_op_us"`
	PeakRSSMB       float64         `json:"peak_rss_mb"`
	RusageMaxRSSMB  float64         `json:"rusage_maxrss_mb"`
	StoreCounts     counting.Counts `json:"store_counts"`
	CSRequests      map[string]int  `json:"cs_requests"`
}

// HandlerFigures is the cost of the handler layer alone: envelope and
// documents decoding, routing, result encoding, with a no-op engine.
type HandlerFigures struct {
	Documents    int `json:"documents"`
	PayloadBytes int `json:"payload_bytes"`
	Iterations   int `json:"iterations"`
	// In process (ServeHTTP): the pure decode-and-route cost.
	InProcessUS     float64 `json:"in_process_us"`
	AllocsPerInvoke float64 `json:"allocs_per_invocation"`
	BytesPerInvoke  float64 `json:"bytes_per_invocation"`
	// Over loopback HTTP with a keep-alive client, as the host calls it.
	HTTPMeanUS float64 `json:"http_mean_us"`
	HTTPP50US  float64 `json:"http_p50_us"`
	HTTPCPUUS  float64 `json:"http_cpu_per_invocation_us"`
	// Recorded is how many documents reached the no-op engine.
	Recorded int `json:"recorded_documents"`
}

// ColdStartFigures is process start to the first healthy GET /.
type ColdStartFigures struct {
	Binary          string    `json:"binary"`
	Runs            int       `json:"runs"`
	MedianMS        float64   `json:"median_ms"`
	MinMS           float64   `json:"min_ms"`
	MaxMS           float64   `json:"max_ms"`
	SamplesMS       []float64 `json:"samples_ms"`
	StrippedBytes   int64     `json:"stripped_bytes"`
	UnstrippedBytes int64     `json:"unstripped_bytes"`
}

// Target is one goal with its verdict.
type Target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	Pass  bool    `json:"pass"`
	Note  string  `json:"note,omitempty"`
}

func verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "MISS"
}

// print renders the report as aligned tables.
func (r *Report) print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "\nhcpopsctl bench: CS simulator latency %gms, concurrency %d, %d CPUs, load %s -> %s\n",
		c.LatencyMS, c.Concurrency, r.Host.CPUs, r.Host.LoadBefore, r.Host.LoadAfter)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	if len(r.Ticks) > 0 {
		fmt.Fprintln(w, "\npoll tick")
		fmt.Fprintln(tw, "scenario\tstore\tN\tB\twall ms\tbound ms\t× bound\tcpu µs/op\tsim cpu µs/op\treads/op\twrites/op\tstore trips/op\tdocs/op\tamortized docs/op\tRU/s\tview B/op\tCS req/op\tids/list\theap MB\talloc B/op\tGCs\tRSS MB\tstore map MB\tchanged\terrors\t")
		for _, t := range r.Ticks {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.3f\t%.2f\t%.3f\t%.4f\t%.4f\t%.0f\t%.0f\t%.3f\t%.0f\t%.1f\t%.0f\t%d\t%.1f\t%.1f\t%d\t%d\t\n",
				t.Scenario, t.Store, t.N, t.CSBatchSize, t.WallMS, t.BoundMS, t.Ratio, t.CPUPerOpUS, t.SimCPUPerOpUS, t.ReadsPerOp, t.WritesPerOp,
				t.StoreRoundTripsPerOp, t.DocsPerOp, t.AmortizedDocsPerOp, t.RUPerSecond, t.ViewHeapPerOpB, t.CSRequestsPerOp, t.CSLists.IDsPerCall,
				t.PeakHeapMB, t.AllocPerOpB, t.GCs, t.PeakRSSMB, t.StoreMapRSSMB, t.Result.Changed, t.Result.Errors)
		}
		tw.Flush()
		for _, t := range r.Ticks {
			if len(t.RoundCPUPerOpUS) > 1 {
				fmt.Fprintf(w, "%s %s N=%d: cpu µs/op by round %s (the median round above; heap MB the highest)\n",
					t.Scenario, t.Store, t.N, strings.Trim(fmt.Sprintf("%.1f", t.RoundCPUPerOpUS), "[]"))
			}
		}
	}
	if len(r.Dispatch) > 0 {
		fmt.Fprintln(w, "\ndispatch through POST /dispatchOperations")
		fmt.Fprintln(tw, "store\tops\tbatches\tops/batch\tdocs/batch\tp50 ms\tp90 ms\tmax ms\tops/s\tCS POST/op\tCS req/op\treads/op\twrites/op\tcpu µs/op\tpeak RSS MB\t")
		for _, d := range r.Dispatch {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.1f\t\n",
				d.Store, d.Operations, d.Batches, d.OpsPerBatch, d.DocsPerBatch, d.BatchP50MS, d.BatchP90MS, d.BatchMaxMS,
				d.OpsPerSecond, d.CSPostsPerOp, d.CSRequestsPerOp, d.ReadsPerOp, d.WritesPerOp, d.CPUPerOpUS, d.PeakRSSMB)
		}
		tw.Flush()
	}
	if h := r.Handler; h != nil {
		fmt.Fprintf(w, "\nhandler overhead, one %d-document invocation (%d bytes), no-op engine, %d iterations\n",
			h.Documents, h.PayloadBytes, h.Iterations)
		fmt.Fprintln(tw, "in-process µs\tallocs\tKB alloc\tHTTP mean µs\tHTTP p50 µs\tHTTP cpu µs\t")
		fmt.Fprintf(tw, "%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", h.InProcessUS, h.AllocsPerInvoke, h.BytesPerInvoke/1024,
			h.HTTPMeanUS, h.HTTPP50US, h.HTTPCPUUS)
		tw.Flush()
	}
	if cs := r.ColdStart; cs != nil {
		fmt.Fprintf(w, "\ncold start (hcpops serve to first healthy GET /), %d runs\n", cs.Runs)
		fmt.Fprintln(tw, "median ms\tmin ms\tmax ms\tstripped MB\tunstripped MB\t")
		fmt.Fprintf(tw, "%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", cs.MedianMS, cs.MinMS, cs.MaxMS,
			float64(cs.StrippedBytes)/(1<<20), float64(cs.UnstrippedBytes)/(1<<20))
		tw.Flush()
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\ntargets")
		tt := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for _, t := range r.Targets {
			note := ""
			if t.Note != "" {
				note = " (" + t.Note + ")"
			}
			fmt.Fprintf(tt, "%s\t%s\t%.3g %s (limit %.3g)%s\n", verdict(t.Pass), t.Name, t.Value, t.Unit, t.Limit, note)
		}
		tt.Flush()
	}
	for _, e := range r.Errors {
		fmt.Fprintln(w, "ERROR:", e)
	}
}

// write saves the report as indented JSON.
func (r *Report) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// loadAverage reads /proc/loadavg; "" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func ms(d time.Duration) float64 { return logging.Millis(d) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
