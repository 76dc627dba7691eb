package benchmark

import (
	"runtime/metrics"
	"time"
)

// heapMetrics together are the Go heap in use (runtime.MemStats.HeapInuse):
// live and not yet swept objects, plus the free space inside their spans.
// RSS also counts the embedded store's memory-mapped file and the
// runtime's other memory, so the two are reported side by side.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}

// heapPeak samples the Go heap until stop is called, which returns the
// highest sample. Sampling runtime/metrics costs about a microsecond and
// stops no goroutine, so the 5 ms period barely touches what is measured.
func heapPeak() (stop func() uint64) {
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		samples[i].Name = name
	}
	read := func() uint64 {
		metrics.Read(samples)
		var sum uint64
		for _, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				sum += s.Value.Uint64()
			}
		}
		return sum
	}
	done := make(chan struct{})
	result := make(chan uint64, 1)
	go func() {
		peak := read()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				result <- max(peak, read())
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}

// allocs is the heap's running totals: bytes ever allocated and
// collections completed.
type allocs struct{ bytes, gcs uint64 }

func allocCounts() allocs {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	var a allocs
	if s[0].Value.Kind() == metrics.KindUint64 {
		a.bytes = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		a.gcs = s[1].Value.Uint64()
	}
	return a
}
