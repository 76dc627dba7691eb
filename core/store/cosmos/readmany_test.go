package cosmos_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// requestCounter counts the store's HTTP attempts.
type requestCounter struct{ n atomic.Int64 }

func (c *requestCounter) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}

// TestReadManyIsOneRequest: 100 documents in 10 partitions cost one query
// on the wire where point reads cost 100 requests.
func TestReadManyIsOneRequest(t *testing.T) {
	ctx := ctxT(t)
	counter := &requestCounter{}
	s := cosmostest.NewStore(t, cosmos.WithPerTryPolicy(counter))
	var refs []store.DocRef
	for i := range 100 {
		pk := fmt.Sprintf("00000000-0000-4000-8000-%012d", i%10)
		id := fmt.Sprintf("doc-%03d", i)
		if _, err := s.Create(ctx, pk, doc(t, pk, id, nil)); err != nil {
			t.Fatalf("Create: %v", err)
		}
		refs = append(refs, store.DocRef{PartitionKey: pk, ID: id})
	}
	if _, err := s.ReadMany(ctx, refs[:1]); err != nil { // warms the SDK's metadata caches
		t.Fatalf("ReadMany: %v", err)
	}
	before := counter.n.Load()
	got, err := s.ReadMany(ctx, refs)
	if err != nil || len(got) != len(refs) {
		t.Fatalf("ReadMany = %d documents, %v; want %d", len(got), err, len(refs))
	}
	if n := counter.n.Load() - before; n != 1 {
		t.Errorf("ReadMany of 100 documents in 10 partitions made %d requests, want 1", n)
	}
	before = counter.n.Load()
	for _, r := range refs[:10] {
		if _, err := s.Get(ctx, r.PartitionKey, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := counter.n.Load() - before; n != 10 {
		t.Errorf("10 point reads made %d requests; the counter is not counting", n)
	}
}
