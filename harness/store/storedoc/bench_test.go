package storedoc

import (
	"os"
	"testing"
	"time"
)

// What a store does with every write of an operation document: parse,
// classify, and (for a soft delete) rewrite three members.

func benchDoc(b *testing.B) []byte {
	raw, err := os.ReadFile("../../document/testdata/operation.json")
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func BenchmarkParse(b *testing.B) {
	raw := benchDoc(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, meta, err := Parse(raw, "1d3378d3-5a3f-4712-85a1-2485495dfc4b"); err != nil || meta.ID == "" {
			b.Fatal(meta, err)
		}
	}
}

func BenchmarkSoftDeleted(b *testing.B) {
	raw := benchDoc(b)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := softDeleted(raw, "1d3378d3-5a3f-4712-85a1-2485495dfc4b", now); err != nil {
			b.Fatal(err)
		}
	}
}
