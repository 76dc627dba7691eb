package lifecycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// BenchmarkTickUnchanged measures a tick over operations whose CS state
// has not moved: one CS GET and two point reads each, no writes.
func BenchmarkTickUnchanged(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("operations=%d", n), func(b *testing.B) {
			e := newEnv(b, func(c *Config) { c.PollConcurrency = 8 })
			slow := testDurations()
			slow.ClusterValidating = 24 * time.Hour
			e.sim.SetDurations(slow)
			for i := range n {
				e.create(b, document.KindCluster, clusterRID(fmt.Sprintf("c%d", i)), request{})
			}
			if res, err := e.deliver(b); err != nil || res.Dispatched != n {
				b.Fatalf("dispatch = %+v, %v", res, err)
			}
			e.tick(b)
			writes := e.store.writes.Load()
			b.ResetTimer()
			for b.Loop() {
				if res, err := e.engine.Tick(context.Background()); err != nil || res.Polled != n || res.Changed != 0 {
					b.Fatalf("tick = %+v, %v", res, err)
				}
			}
			b.StopTimer()
			if w := e.store.writes.Load() - writes; w != 0 {
				b.Fatalf("unchanged ticks wrote %d documents", w)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/operation")
		})
	}
}

// BenchmarkDispatchRedelivered measures a change-feed batch whose
// operations are all dispatched already: re-reads only.
func BenchmarkDispatchRedelivered(b *testing.B) {
	e := newEnv(b)
	const n = 50
	for i := range n {
		e.create(b, document.KindCluster, clusterRID(fmt.Sprintf("c%d", i)), request{})
	}
	docs := e.feed(b)
	if res, err := e.engine.DispatchDocuments(context.Background(), docs); err != nil || res.Dispatched != n {
		b.Fatalf("dispatch = %+v, %v", res, err)
	}
	b.ResetTimer()
	for b.Loop() {
		if res, err := e.engine.DispatchDocuments(context.Background(), docs); err != nil || res.Dispatched != 0 {
			b.Fatalf("redelivery = %+v, %v", res, err)
		}
	}
}
