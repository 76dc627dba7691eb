package ocm

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkClientGetClusterStatus64 measures the ocm client against the
// simulator on loopback with 64 concurrent callers.
func BenchmarkClientGetClusterStatus64(b *testing.B) {
	e := newEnv(b, defaultConfig())
	c, err := e.client.PostCluster(e.ctx, clusterSpec(1))
	if err != nil {
		b.Fatal(err)
	}
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.client.GetClusterStatus(e.ctx, c.Href); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkListClustersByHref measures one batched list of 100 clusters
// against the simulator on loopback (the simulator's CPU included).
func BenchmarkListClustersByHref(b *testing.B) {
	e := newEnv(b, defaultConfig())
	var hrefs []string
	for i := range 100 {
		c, err := e.client.PostCluster(e.ctx, clusterSpec(i))
		if err != nil {
			b.Fatal(err)
		}
		hrefs = append(hrefs, c.Href)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := e.client.ListClustersByHref(e.ctx, hrefs)
		if err != nil || len(got) != len(hrefs) {
			b.Fatalf("%d clusters listed: %v", len(got), err)
		}
	}
}
