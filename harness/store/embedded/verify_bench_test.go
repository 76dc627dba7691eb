package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

// BenchmarkOpenVerify measures Open's consistency check on a store of
// HCPOPS_VERIFY_BENCH_MB megabytes (default 64) of 2 KiB operation
// documents; MB/s is the rate the README quotes per GB:
//
//	HCPOPS_VERIFY_BENCH_MB=1024 go test -run '^$' -bench BenchmarkOpenVerify -benchtime 3x ./harness/store/embedded/
func BenchmarkOpenVerify(b *testing.B) {
	mb := 64
	if v := os.Getenv("HCPOPS_VERIFY_BENCH_MB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("HCPOPS_VERIFY_BENCH_MB=%q: want a positive number of megabytes", v)
		}
		mb = n
	}
	path := filepath.Join(b.TempDir(), "store.db")
	s, err := Open(path, WithClock(newFakeClock()), WithoutSync())
	if err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("x", 1800)
	for i := 0; ; i++ {
		ops := make([]store.BatchOp, 0, store.MaxBatchOps)
		for j := range store.MaxBatchOps {
			id := fmt.Sprintf("op-%d-%d", i, j)
			body := strings.Replace(string(opBody(id, "Accepted")), `"ttl":604800`, `"ttl":604800,"pad":"`+pad+`"`, 1)
			ops = append(ops, store.BatchOp{Kind: store.OpCreate, Body: []byte(body)})
		}
		if _, err := s.Batch(context.Background(), pk, ops); err != nil {
			b.Fatal(err)
		}
		if i%50 == 0 {
			if fi, err := os.Stat(path); err == nil && fi.Size() >= int64(mb)<<20 {
				break
			}
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for range b.N {
		s, err := Open(path, WithClock(newFakeClock()))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
