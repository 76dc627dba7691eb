package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/harness/store/storetest"
)

// benchStore is a durable store on the real clock, as production runs it.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "store.db"))
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

func BenchmarkPointRead(b *testing.B)  { storetest.PointReads(b, benchStore(b)) }
func BenchmarkReadMany(b *testing.B)   { storetest.ReadManys(b, benchStore(b)) }
func BenchmarkReplace(b *testing.B)    { storetest.Replaces(b, benchStore(b)) }
func BenchmarkBatchWrite(b *testing.B) { storetest.BatchWrites(b, benchStore(b)) }

func BenchmarkActiveOperations(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			storetest.ActiveOperations(b, benchStore(b), n)
		})
	}
}

// The same writes without fsync: what the store itself costs.
func BenchmarkReplaceNoSync(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "store.db"), WithoutSync())
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.Replaces(b, s)
}

// BenchmarkReplaceParallel64 is a changed tick's write pattern: 64
// writers, each replacing its own document on a durable store. Concurrent
// writes share commits (see committer), so this is far above
// BenchmarkReplace's one fsync per write.
func BenchmarkReplaceParallel64(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	const pk = "0000000e-5eed-4000-8000-00000000000e"
	var next atomic.Int64
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprint("d", next.Add(1))
		body := []byte(`{"id":"` + id + `","partitionKey":"` + pk + `","v":1}`)
		item, err := s.Create(ctx, pk, body)
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if item, err = s.Replace(ctx, pk, id, body, item.ETag); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "replaces/s")
}
