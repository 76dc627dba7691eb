package simulator

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// BenchmarkGetClusterStatus64 measures simulator throughput on loopback
// with 64 concurrent clients polling one cluster's status.
func BenchmarkGetClusterStatus64(b *testing.B) {
	sim := New(WithClock(newFakeClock()))
	defer sim.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	post, err := client.Post(url+clustersPath, "application/json", fileReader(b, "cluster.json"))
	if err != nil || post.StatusCode != 201 {
		b.Fatalf("POST cluster: %v %v", err, post)
	}
	post.Body.Close()
	target := url + clusterPath(testID) + "/status"

	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(target)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

func fileReader(b *testing.B, name string) io.Reader {
	b.Helper()
	f, err := http.Dir("testdata").Open(name)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
