package cosmos_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/store/storetest"
)

// Benchmarks measure the store against the local Cosmos test server: client
// and server share the machine's cores, so the figures bound the server and
// SDK overhead, not Cosmos DB itself. The serial ones are storetest's, the
// same as the embedded store runs.

func BenchmarkPointRead(b *testing.B)  { storetest.PointReads(b, cosmostest.NewStore(b)) }
func BenchmarkReadMany(b *testing.B)   { storetest.ReadManys(b, cosmostest.NewStore(b)) }
func BenchmarkReplace(b *testing.B)    { storetest.Replaces(b, cosmostest.NewStore(b)) }
func BenchmarkBatchWrite(b *testing.B) { storetest.BatchWrites(b, cosmostest.NewStore(b)) }

// BenchmarkActiveOperations stops at 1000: the test server re-runs a query
// over the whole container for every page, so its cost grows with n squared
// (n=10000 took ~27 s a pass) while the store's own memory stays flat.
func BenchmarkActiveOperations(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			storetest.ActiveOperations(b, cosmostest.NewStore(b), n)
		})
	}
}

func benchDoc(b *testing.B, pk, id string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"partitionKey":%q,"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters",`+
		`"properties":{"cosmosMetadata":{"instanceVersion":1},"serviceProviderProperties":{"provisioningState":"Provisioning"}}}`, id, pk))
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkGetParallel(b *testing.B) {
	s := cosmostest.NewStore(b)
	ctx := context.Background()
	if _, err := s.Create(ctx, sub1, benchDoc(b, sub1, "d")); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8) // 8 goroutines per core
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(ctx, sub1, "d"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b)
}

// BenchmarkReplaceParallel: each goroutine replaces its own document.
func BenchmarkReplaceParallel(b *testing.B) {
	s := cosmostest.NewStore(b)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprintf("d%d", next.Add(1))
		body := benchDoc(b, sub1, id)
		item, err := s.Create(ctx, sub1, body)
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if item, err = s.Replace(ctx, sub1, id, body, item.ETag); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b)
}
