package activeset

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkTableFind is the view's lookup of a resource as a tick asks
// it: 100 partitions of 1,000, a page's operations one partition's, their
// resources in no order.
func BenchmarkTableFind(b *testing.B) {
	var tabs [100]table[resEntry]
	var keys []key
	r := rand.New(rand.NewPCG(1, 2))
	for p := range tabs {
		for range 1000 {
			var k key
			binary.LittleEndian.PutUint64(k.u[:], r.Uint64())
			binary.LittleEndian.PutUint64(k.u[8:], r.Uint64())
			tabs[p].entries = append(tabs[p].entries, resEntry{k: k})
			keys = append(keys, k)
		}
		slices.SortFunc(tabs[p].entries, func(a, b resEntry) int { return compareKeys(a.k, b.k) })
	}
	var order []int
	for p := range 10 {
		for _, i := range r.Perm(1000) {
			order = append(order, p*1000+i)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, i := range order {
			if _, ok := tabs[i/1000].get(keys[i]); !ok {
				b.Fatal("a held key was not found")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(order)), "ns/lookup")
}
