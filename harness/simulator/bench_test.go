package simulator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// BenchmarkSnapshotSave100 measures one save of a simulator holding 100
// clusters (what each changing request costs a dev run that persists):
// encode, write, fsync, rename. Each iteration changes the state, so no
// save is skipped as unchanged.
func BenchmarkSnapshotSave100(b *testing.B) {
	sim := New(WithClock(newFakeClock()))
	defer sim.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	body, err := os.ReadFile("testdata/cluster.json")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		id := fmt.Sprintf("%032d", i)
		resp, err := http.Post(url+clustersPath, "application/json", strings.NewReader(strings.Replace(string(body), testID, id, 1)))
		if err != nil || resp.StatusCode != 201 {
			b.Fatalf("POST cluster %d: %v %v", i, err, resp)
		}
		resp.Body.Close()
	}
	p := &persister{path: filepath.Join(b.TempDir(), SnapshotFile)}
	b.ResetTimer()
	for i := range b.N {
		sim.Advance(time.Duration(i+1) * time.Nanosecond)
		if err := p.save(sim); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if fi, err := os.Stat(p.path); err == nil {
		b.ReportMetric(float64(fi.Size()), "bytes")
	}
}
