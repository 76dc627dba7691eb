package cosmos_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos/cosmostest"
)

// Benchmarks measure the store against the local Cosmos test server: client
// and server share the machine's cores, so the figures bound the server and
// SDK overhead, not Cosmos DB itself.

func benchDoc(b *testing.B, pk, id string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"partitionKey":%q,"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters",`+
		`"properties":{"cosmosMetadata":{"instanceVersion":1},"serviceProviderProperties":{"provisioningState":"Provisioning"}}}`, id, pk))
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkGet(b *testing.B) {
	s := cosmostest.NewStore(b)
	ctx := context.Background()
	if _, err := s.Create(ctx, sub1, benchDoc(b, sub1, "d")); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Get(ctx, sub1, "d"); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b)
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

func BenchmarkReplace(b *testing.B) {
	s := cosmostest.NewStore(b)
	ctx := context.Background()
	item, err := s.Create(ctx, sub1, benchDoc(b, sub1, "d"))
	if err != nil {
		b.Fatal(err)
	}
	body := benchDoc(b, sub1, "d")
	b.ResetTimer()
	for b.Loop() {
		if item, err = s.Replace(ctx, sub1, "d", body, item.ETag); err != nil {
			b.Fatal(err)
		}
	}
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

// BenchmarkBatch is the poller's write: operation and resource replaced together.
func BenchmarkBatch(b *testing.B) {
	s := cosmostest.NewStore(b)
	ctx := context.Background()
	op, err := s.Create(ctx, sub1, benchDoc(b, sub1, "op"))
	if err != nil {
		b.Fatal(err)
	}
	res, err := s.Create(ctx, sub1, benchDoc(b, sub1, "res"))
	if err != nil {
		b.Fatal(err)
	}
	opBody, resBody := benchDoc(b, sub1, "op"), benchDoc(b, sub1, "res")
	b.ResetTimer()
	for b.Loop() {
		items, err := s.Batch(ctx, sub1, []store.BatchOp{
			{Kind: store.OpReplace, ID: "op", Body: opBody, IfMatch: op.ETag},
			{Kind: store.OpReplace, ID: "res", Body: resBody, IfMatch: res.ETag},
		})
		if err != nil {
			b.Fatal(err)
		}
		op, res = items[0], items[1]
	}
	reportRate(b)
}
