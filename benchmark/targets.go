package benchmark

import (
	"fmt"
	"slices"
)

// The project's targets.
const (
	targetN          = 10000
	targetTickRatio  = 1.25
	targetCPUPerOpUS = 300
	targetPeakRSSMB  = 200
	targetColdStart  = 100 // ms
)

// targets judges the figures. Tick targets are taken at the largest N
// measured and say so when that is not the N they are set for.
func targets(r *Report, o options) []Target {
	out := []Target{}
	if len(o.ns) > 0 && len(r.Ticks) > 0 {
		n := slices.Max(o.ns)
		note := ""
		if n != targetN {
			note = fmt.Sprintf("measured at N=%d; the target is for N=%d", n, targetN)
		}
		var unchanged *TickFigures
		maxRSS, writes, sawUnchanged := 0.0, 0.0, false
		for i, t := range r.Ticks {
			if t.N == n {
				maxRSS = max(maxRSS, t.PeakRSSMB)
			}
			if t.Scenario == ScenarioTickUnchanged {
				sawUnchanged = true
				writes = max(writes, float64(t.StoreCounts.Writes()))
				if t.N == n {
					unchanged = &r.Ticks[i]
				}
			}
		}
		if unchanged != nil {
			out = append(out,
				Target{Name: "unchanged tick wall time / bound", Value: unchanged.Ratio, Limit: targetTickRatio, Unit: "x",
					Pass: unchanged.Ratio <= targetTickRatio, Note: note},
				Target{Name: "CPU per polled operation (unchanged tick)", Value: unchanged.CPUPerOpUS, Limit: targetCPUPerOpUS,
					Unit: "µs", Pass: unchanged.CPUPerOpUS < targetCPUPerOpUS, Note: note})
		}
		if sawUnchanged {
			out = append(out, Target{Name: "store writes when nothing changed", Value: writes, Limit: 0, Unit: "writes",
				Pass: writes == 0, Note: "every N measured"})
		}
		out = append(out, Target{Name: "peak RSS of a tick", Value: maxRSS, Limit: targetPeakRSSMB, Unit: "MB",
			Pass: maxRSS < targetPeakRSSMB, Note: note})
	}
	if cs := r.ColdStart; cs != nil {
		out = append(out, Target{Name: "cold start to first healthy GET / (median)", Value: cs.MedianMS,
			Limit: targetColdStart, Unit: "ms", Pass: cs.MedianMS < targetColdStart})
	}
	return out
}
