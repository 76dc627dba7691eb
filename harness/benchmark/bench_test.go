package benchmark

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// settledStore seeds n dispatched cluster creates, settles them in
// Provisioning and returns the store file and the simulator.
func settledStore(b *testing.B, n int) (string, *csWorld) {
	b.Helper()
	ctx := context.Background()
	w, err := newCSWorld(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.close)
	path := filepath.Join(b.TempDir(), "store.db")
	if err := prepareTick(ctx, w, path, n, 64, func(string, ...any) {}); err != nil {
		b.Fatal(err)
	}
	if err := settleTick(ctx, w, path, 64); err != nil {
		b.Fatal(err)
	}
	return path, w
}

// BenchmarkTickUnchanged is the steady-state tick in process at zero CS
// latency, so its time is CPU (engine, client and simulator together);
// run it with -cpuprofile to see where a poll's CPU goes.
func BenchmarkTickUnchanged(b *testing.B) {
	const n = 200
	path, w := settledStore(b, n)
	s, err := openStore(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, err := assemble(context.Background(), s, w.url, 64, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer a.close()
	b.ResetTimer()
	for b.Loop() {
		res, err := a.app.Engine.Tick(context.Background())
		if err != nil || res.Polled != n || res.Changed != 0 {
			b.Fatalf("tick: %+v, %v", res, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/poll")
}

// seededItems returns one settled operation document and its cluster.
func seededItems(b *testing.B) (op, cluster store.Item) {
	b.Helper()
	path, _ := settledStore(b, 1)
	s, err := openStore(path, true)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	items, _, err := readFeed(context.Background(), s, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, it := range items {
		switch k, _ := document.Sniff(it.Body); k {
		case document.KindOperation:
			op = it
		case document.KindCluster:
			cluster = it
		}
	}
	if op.Body == nil || cluster.Body == nil {
		b.Fatal("seeded store lacks an operation or a cluster")
	}
	return op, cluster
}

// BenchmarkParseOperation and BenchmarkParseResource are the two parses
// every poll makes, on documents exactly as a tick reads them.
func BenchmarkParseOperation(b *testing.B) {
	op, _ := seededItems(b)
	b.SetBytes(int64(len(op.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := document.ParseOperation(op.Body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseResource(b *testing.B) {
	_, cluster := seededItems(b)
	b.SetBytes(int64(len(cluster.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := document.ParseResource(cluster.Body); err != nil {
			b.Fatal(err)
		}
	}
}
