package embedded

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hcpops/hcpops/core/store/storetest"
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
