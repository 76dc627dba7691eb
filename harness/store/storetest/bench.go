package storetest

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

// The benchmarks below take a fresh store and measure one access pattern of
// the lifecycle each, so the embedded and Cosmos stores can be compared on
// the same terms. Each reports ops/s besides ns/op.

// PointReads measures Get of one cluster document.
func PointReads(b *testing.B, s store.Store) {
	ctx := context.Background()
	sub := newSubscription()
	cluster := clusterDoc(sub, "rg", "bench")
	mustCreate(b, s, sub, cluster)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Get(ctx, sub, cluster.ID()); err != nil {
			b.Fatalf("Get: %v", err)
		}
	}
	reportRate(b, "reads/s")
}

// ReadManys measures ReadMany of a page of 100 cluster documents spread
// over 10 partitions, as a tick reads a page's resources; the rate is in
// documents per second, to compare with PointReads.
func ReadManys(b *testing.B, s store.Store) {
	ctx := context.Background()
	var refs []store.DocRef
	subs := make([]string, 10)
	for i := range subs {
		subs[i] = newSubscription()
	}
	for i := range 100 {
		sub := subs[i%len(subs)]
		d := clusterDoc(sub, "rg", fmt.Sprintf("bench-%d", i))
		mustCreate(b, s, sub, d)
		refs = append(refs, store.DocRef{PartitionKey: sub, ID: d.ID()})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := s.ReadMany(ctx, refs)
		if err != nil || len(got) != len(refs) {
			b.Fatalf("ReadMany = %d documents, %v; want %d", len(got), err, len(refs))
		}
	}
	b.ReportMetric(float64(b.N*len(refs))/b.Elapsed().Seconds(), "docs/s")
}

// Replaces measures ETag-guarded replaces of one operation document, each
// with the etag the previous one returned.
func Replaces(b *testing.B, s store.Store) {
	ctx := context.Background()
	sub := newSubscription()
	op := operationDoc(sub, "Provisioning")
	item := mustCreate(b, s, sub, op)
	body := op.JSON(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var err error
		if item, err = s.Replace(ctx, sub, op.ID(), body, item.ETag); err != nil {
			b.Fatalf("Replace: %v", err)
		}
	}
	reportRate(b, "replaces/s")
}

// BatchWrites measures the poller's write: one transactional batch that
// replaces an operation and its cluster together.
func BatchWrites(b *testing.B, s store.Store) {
	ctx := context.Background()
	sub := newSubscription()
	op, cluster := operationDoc(sub, "Provisioning"), clusterDoc(sub, "rg", "bench")
	opItem, clusterItem := mustCreate(b, s, sub, op), mustCreate(b, s, sub, cluster)
	opBody, clusterBody := op.JSON(b), cluster.JSON(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		items, err := s.Batch(ctx, sub, []store.BatchOp{
			{Kind: store.OpReplace, ID: op.ID(), Body: opBody, IfMatch: opItem.ETag},
			{Kind: store.OpReplace, ID: cluster.ID(), Body: clusterBody, IfMatch: clusterItem.ETag},
		})
		if err != nil {
			b.Fatalf("Batch: %v", err)
		}
		opItem, clusterItem = items[0], items[1]
	}
	reportRate(b, "batches/s")
}

// ActiveOperations measures streaming n active operations (spread over ten
// partitions) in default-size pages. Besides time it reports, per document,
// the allocations and bytes allocated, and peak-live-B: the most heap alive
// at any page boundary. A streaming store keeps all three flat as n grows;
// one that gathered the whole result first would see peak-live-B grow with n.
func ActiveOperations(b *testing.B, s store.Store, n int) {
	ctx := context.Background()
	subs := make([]string, 10)
	for i := range subs {
		subs[i] = newSubscription()
	}
	seedOperations(b, s, subs, n)
	stream := func(onPage func([]store.Item)) {
		seen := 0
		err := s.ActiveOperations(ctx, store.ActiveOperationsQuery{}, func(items []store.Item) error {
			seen += len(items)
			onPage(items)
			return nil
		})
		if err != nil {
			b.Fatalf("ActiveOperations: %v", err)
		}
		if seen < n {
			b.Fatalf("streamed %d operations, seeded %d", seen, n)
		}
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	runs := 0
	b.ResetTimer()
	for b.Loop() {
		stream(func([]store.Item) {})
		runs++
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	docs := float64(runs) * float64(n)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/docs, "allocs/doc")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/docs, "B/doc")
	b.ReportMetric(float64(n)*float64(runs)/b.Elapsed().Seconds(), "docs/s")

	// One more pass, untimed, collecting garbage at every page while the
	// page is still in use, so that what is left on the heap is what the
	// stream keeps alive.
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base, peak := m.HeapAlloc, uint64(0)
	stream(func(page []store.Item) {
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > base && m.HeapAlloc-base > peak {
			peak = m.HeapAlloc - base
		}
		runtime.KeepAlive(page)
	})
	b.ReportMetric(float64(peak), "peak-live-B")
}

// seedOperations creates n active operations round-robin over subs, in
// batches of 100 per partition.
func seedOperations(b *testing.B, s store.Store, subs []string, n int) {
	ctx := context.Background()
	pending := make(map[string][]store.BatchOp, len(subs))
	flush := func(sub string) {
		if len(pending[sub]) == 0 {
			return
		}
		if _, err := s.Batch(ctx, sub, pending[sub]); err != nil {
			b.Fatalf("seeding operations: %v", err)
		}
		pending[sub] = pending[sub][:0]
	}
	for i := range n {
		sub := subs[i%len(subs)]
		pending[sub] = append(pending[sub], store.BatchOp{Kind: store.OpCreate, Body: operationDoc(sub, "Provisioning").JSON(b)})
		if len(pending[sub]) == 100 {
			flush(sub)
		}
	}
	for _, sub := range subs {
		flush(sub)
	}
}

func reportRate(b *testing.B, unit string) {
	if secs := b.Elapsed().Seconds(); secs > 0 {
		b.ReportMetric(float64(b.N)/secs, unit)
	}
}
