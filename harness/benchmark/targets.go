package benchmark

import "fmt"

// The project's targets (batched polling, then the change-fed view).
const (
	targetDocsPerOp      = 0.01 // documents read per operation, unchanged tick, relists amortized
	targetOnePercentDocs = 0.03 // the same after 1% of the operations changed
	targetFirstTickDocs  = 2.0  // a full read: each operation and its resource, as every tick before the view
	targetN              = 10000
	targetBigN           = 100000
	targetCSPerOp        = 0.02  // CS requests per polled operation
	targetTripsPerOp     = 0.05  // store round trips per polled operation
	targetBigWallMS      = 8000  // the unchanged tick at N=100,000: inside one 10-s timer period
	targetPeakHeapMB     = 100   // Go heap at N=100,000 (#35: the view holds projections)
	targetCPUPerOpUS     = 18    // unchanged tick at N=10,000 and 100,000 (#35: no parse per tick)
	targetChangedMS      = 12000 // every-operation-changed tick at N=10,000, durable: no slower than before (8.4-12 s)
	targetPeakRSSMB      = 200   // at N=10,000
	targetColdStart      = 100   // ms
)

// targets judges the figures. A target set for an N that was not measured
// is judged at the largest N measured, and says so.
func targets(r *Report) []Target {
	out := []Target{}
	pick := func(scenario, store string, n int) (*TickFigures, string) {
		var best *TickFigures
		for i, t := range r.Ticks {
			if t.Scenario != scenario || (store != "" && t.Store != store) {
				continue
			}
			if t.N == n {
				return &r.Ticks[i], ""
			}
			if best == nil || t.N > best.N {
				best = &r.Ticks[i]
			}
		}
		if best == nil {
			return nil, ""
		}
		return best, fmt.Sprintf("measured at N=%d; the target is for N=%d", best.N, n)
	}
	add := func(t Target) { out = append(out, t) }

	for _, n := range []int{targetN, targetBigN} {
		if t, note := pick(ScenarioTickUnchanged, "", n); t != nil && (note == "" || n == targetN) {
			add(Target{Name: fmt.Sprintf("CS requests per polled operation (unchanged tick, N=%d)", n), Value: t.CSRequestsPerOp,
				Limit: targetCSPerOp, Unit: "req/op", Pass: t.CSRequestsPerOp <= targetCSPerOp, Note: note})
		}
	}
	if t, note := pick(ScenarioTickUnchanged, "", targetN); t != nil {
		add(Target{Name: "store round trips per polled operation (embedded)", Value: t.StoreRoundTripsPerOp,
			Limit: targetTripsPerOp, Unit: "trips/op", Pass: t.StoreRoundTripsPerOp <= targetTripsPerOp, Note: note})
	}
	for _, n := range []int{targetN, targetBigN} {
		if t, note := pick(ScenarioTickUnchanged, "", n); t != nil && (note == "" || n == targetN) {
			add(Target{Name: fmt.Sprintf("CPU per polled operation (unchanged tick, N=%d)", n), Value: t.CPUPerOpUS,
				Limit: targetCPUPerOpUS, Unit: "µs", Pass: t.CPUPerOpUS <= targetCPUPerOpUS, Note: note})
		}
	}
	for _, n := range []int{targetN, targetBigN} {
		if t, note := pick(ScenarioTickUnchanged, "", n); t != nil && (note == "" || n == targetN) {
			add(Target{Name: fmt.Sprintf("store documents read per operation (unchanged tick, relists amortized, N=%d)", n),
				Value: t.AmortizedDocsPerOp, Limit: targetDocsPerOp, Unit: "docs/op", Pass: t.AmortizedDocsPerOp <= targetDocsPerOp,
				Note: join(note, fmt.Sprintf("%.4f without the relist's jitter", t.StrictDocsPerOp))})
		}
		if t, note := pick(ScenarioTickOnePercent, "", n); t != nil && (note == "" || n == targetN) {
			add(Target{Name: fmt.Sprintf("store documents read per operation (1%% changed, relists amortized, N=%d)", n),
				Value: t.AmortizedDocsPerOp, Limit: targetOnePercentDocs, Unit: "docs/op", Pass: t.AmortizedDocsPerOp <= targetOnePercentDocs,
				Note: join(note, fmt.Sprintf("%.4f in the tick itself, %.4f without the relist's jitter", t.DocsPerOp, t.StrictDocsPerOp))})
		}
	}
	if t, note := pick(ScenarioTickFirst, "", targetN); t != nil {
		add(Target{Name: "store documents read per operation (first tick after a start)", Value: t.DocsPerOp,
			Limit: targetFirstTickDocs, Unit: "docs/op", Pass: t.DocsPerOp <= targetFirstTickDocs, Note: note})
	}
	if t, note := pick(ScenarioTickCosmos, "", targetN); t != nil {
		add(Target{Name: "store round trips per polled operation (Cosmos)", Value: t.StoreRoundTripsPerOp,
			Limit: targetTripsPerOp, Unit: "trips/op", Pass: t.StoreRoundTripsPerOp <= targetTripsPerOp, Note: note})
		add(Target{Name: "Cosmos HTTP requests per polled operation", Value: t.StoreHTTPPerOp,
			Limit: targetTripsPerOp, Unit: "req/op", Pass: t.StoreHTTPPerOp <= targetTripsPerOp, Note: note})
	}
	if t, note := pick(ScenarioTickUnchanged, "", targetBigN); t != nil {
		add(Target{Name: "unchanged tick wall time", Value: t.WallMS, Limit: targetBigWallMS, Unit: "ms",
			Pass: t.WallMS <= targetBigWallMS, Note: note})
		add(Target{Name: "peak Go heap of the unchanged tick", Value: t.PeakHeapMB, Limit: targetPeakHeapMB, Unit: "MB",
			Pass: t.PeakHeapMB <= targetPeakHeapMB, Note: note})
	}
	if t, note := pick(ScenarioTickChanged, storeDurable, targetN); t != nil {
		add(Target{Name: "every-operation-changed tick wall time (durable)", Value: t.WallMS, Limit: targetChangedMS,
			Unit: "ms", Pass: t.WallMS <= targetChangedMS, Note: note})
	}
	writes, sawUnchanged := 0.0, false
	for _, t := range r.Ticks {
		if t.Scenario == ScenarioTickUnchanged || t.Scenario == ScenarioTickFirst || t.Scenario == ScenarioTickOnePercent ||
			t.Scenario == ScenarioTickCosmos {
			sawUnchanged = true
			writes = max(writes, float64(t.StoreCounts.Writes()))
		}
	}
	if sawUnchanged {
		add(Target{Name: "store writes when nothing changed", Value: writes, Limit: 0, Unit: "writes",
			Pass: writes == 0, Note: "every N measured"})
	}
	if t, note := pick(ScenarioTickUnchanged, "", targetN); t != nil {
		maxRSS := 0.0
		for _, u := range r.Ticks {
			if u.N == t.N && u.Store != storeCosmos {
				maxRSS = max(maxRSS, u.PeakRSSMB)
			}
		}
		add(Target{Name: "peak RSS of a tick", Value: maxRSS, Limit: targetPeakRSSMB, Unit: "MB",
			Pass: maxRSS < targetPeakRSSMB, Note: note})
	}
	if cs := r.ColdStart; cs != nil {
		add(Target{Name: "cold start to first healthy GET / (median)", Value: cs.MedianMS,
			Limit: targetColdStart, Unit: "ms", Pass: cs.MedianMS < targetColdStart})
	}
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
