package cosmos_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

const (
	sub1 = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	sub2 = "9b0c1a2e-0000-4000-8000-00000000abcd"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// doc builds a document in partition pk; fields are merged over the envelope.
func doc(t *testing.T, pk, id string, fields map[string]any) []byte {
	t.Helper()
	m := map[string]any{"id": id, "partitionKey": pk}
	for k, v := range fields {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return m
}

func TestPointOperations(t *testing.T) {
	s := cosmostest.NewStore(t)
	ctx := ctxT(t)

	created, err := s.Create(ctx, sub1, doc(t, sub1, "a", map[string]any{"n": 1, "keep": map[string]any{"x": []int{1, 2}}}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if created.ETag == "" || decode(t, created.Body)["_etag"] != created.ETag {
		t.Fatalf("Create returned etag %q and body %s; want the body's _etag", created.ETag, created.Body)
	}

	got, err := s.Get(ctx, sub1, "a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.ETag != created.ETag || decode(t, got.Body)["n"] != float64(1) {
		t.Fatalf("Get = %s (etag %q), want n=1 with etag %q", got.Body, got.ETag, created.ETag)
	}

	replaced, err := s.Replace(ctx, sub1, "a", doc(t, sub1, "a", map[string]any{"n": 2}), got.ETag)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if replaced.ETag == got.ETag {
		t.Fatalf("Replace kept etag %q", got.ETag)
	}

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"create duplicate id", func() error { _, err := s.Create(ctx, sub1, doc(t, sub1, "a", nil)); return err }, store.ErrConflict},
		{"replace with stale etag", func() error {
			_, err := s.Replace(ctx, sub1, "a", doc(t, sub1, "a", nil), got.ETag)
			return err
		}, store.ErrPreconditionFailed},
		{"replace missing", func() error {
			_, err := s.Replace(ctx, sub1, "nope", doc(t, sub1, "nope", nil), replaced.ETag)
			return err
		}, store.ErrNotFound},
		{"get missing", func() error { _, err := s.Get(ctx, sub1, "nope"); return err }, store.ErrNotFound},
		{"get from another partition", func() error { _, err := s.Get(ctx, sub2, "a"); return err }, store.ErrNotFound},
		{"soft delete missing", func() error { return s.SoftDelete(ctx, sub1, "nope") }, store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("error %v does not carry the service's *azcore.ResponseError", err)
			}
		})
	}

	// The same id in another partition is another document.
	if _, err := s.Create(ctx, sub2, doc(t, sub2, "a", nil)); err != nil {
		t.Fatalf("Create same id in another partition: %v", err)
	}
}

func TestInvalidRequests(t *testing.T) {
	s := cosmostest.NewStore(t)
	ctx := ctxT(t)
	tests := []struct {
		name string
		call func() error
	}{
		{"create not JSON", func() error { _, err := s.Create(ctx, sub1, []byte("{nope")); return err }},
		{"create without id", func() error { _, err := s.Create(ctx, sub1, []byte(`{"partitionKey":"`+sub1+`"}`)); return err }},
		{"create with numeric id", func() error { _, err := s.Create(ctx, sub1, []byte(`{"id":7,"partitionKey":"`+sub1+`"}`)); return err }},
		{"create with slash in id", func() error { _, err := s.Create(ctx, sub1, doc(t, sub1, "a/b", nil)); return err }},
		{"create in wrong partition", func() error { _, err := s.Create(ctx, sub2, doc(t, sub1, "a", nil)); return err }},
		{"create without partitionKey field", func() error { _, err := s.Create(ctx, sub1, []byte(`{"id":"a"}`)); return err }},
		{"create with empty partition", func() error { _, err := s.Create(ctx, "", doc(t, "", "a", nil)); return err }},
		{"replace without etag", func() error { _, err := s.Replace(ctx, sub1, "a", doc(t, sub1, "a", nil), ""); return err }},
		{"replace with other id in body", func() error { _, err := s.Replace(ctx, sub1, "a", doc(t, sub1, "b", nil), "x"); return err }},
		{"get empty id", func() error { _, err := s.Get(ctx, sub1, ""); return err }},
		{"batch with no ops", func() error { _, err := s.Batch(ctx, sub1, nil); return err }},
		{"change feed maxItems 0", func() error { _, err := s.ChangeFeed(ctx, "", 0); return err }},
		{"change feed foreign continuation", func() error { _, err := s.ChangeFeed(ctx, `"17"`, 10); return err }},
		{"children without parent", func() error { return s.Children(ctx, sub1, "", func([]store.Item) error { return nil }) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
		})
	}
}

func TestSoftDelete(t *testing.T) {
	now := time.Date(2026, 3, 14, 4, 0, 1, 500, time.UTC)
	s := cosmostest.NewStore(t, cosmos.WithClock(testsupport.NewClock(now)))
	ctx := ctxT(t)
	const parent = "/subscriptions/" + sub1 + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
	body := doc(t, sub1, "np", map[string]any{
		"resourceID": parent + "/nodePools/np1",
		"properties": map[string]any{
			"cosmosMetadata": map[string]any{"resourceID": parent + "/nodePools/np1", "instanceVersion": 4, "partitionKey": sub1},
			"unmodelled":     map[string]any{"deep": []any{"kept", 1.5, nil}},
		},
	})
	if _, err := s.Create(ctx, sub1, body); err != nil {
		t.Fatal(err)
	}
	if err := s.SoftDelete(ctx, sub1, "np"); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	if _, err := s.Get(ctx, sub1, "np"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after SoftDelete = %v, want ErrNotFound", err)
	}
	if err := s.SoftDelete(ctx, sub1, "np"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second SoftDelete = %v, want ErrNotFound", err)
	}

	// The stored document carries ARO-HCP's soft-delete fields; the change
	// feed shows the raw latest version.
	page, err := s.ChangeFeed(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 {
		t.Fatalf("change feed has %d items, want 1", len(page.Items))
	}
	stored := decode(t, page.Items[0].Body)
	props := stored["properties"].(map[string]any)
	meta := props["cosmosMetadata"].(map[string]any)
	checks := map[string][2]any{
		"deletionTimestamp": {stored["deletionTimestamp"], "2026-03-14T04:00:01.0000005Z"},
		"ttl":               {stored["ttl"], float64(30)},
		"instanceVersion":   {meta["instanceVersion"], float64(5)},
		"resourceID":        {meta["resourceID"], parent + "/nodePools/np1"},
		"unmodelled":        {mustJSON(t, props["unmodelled"]), `{"deep":["kept",1.5,null]}`},
	}
	for field, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", field, c[0], c[1])
		}
	}

	// Lists skip it.
	var children int
	if err := s.Children(ctx, sub1, parent, func(items []store.Item) error { children += len(items); return nil }); err != nil {
		t.Fatal(err)
	}
	if children != 0 {
		t.Fatalf("Children returned %d soft-deleted documents", children)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExpiredDocumentsAreHidden(t *testing.T) {
	clk := testsupport.NewClock(time.Now())
	s := cosmostest.NewStore(t, cosmos.WithClock(clk))
	ctx := ctxT(t)
	if _, err := s.Create(ctx, sub1, doc(t, sub1, "op", map[string]any{"ttl": 604800})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, sub1, "op"); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	clk.Advance(604801 * time.Second)
	if _, err := s.Get(ctx, sub1, "op"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get 7 days later = %v, want ErrNotFound", err)
	}
}

// The server really expires documents too: Cosmos counts ttl from _ts.
// It exists to watch the server's own TTL sweep, on the server's wall
// clock, so it waits for it in real time (about a second).
func TestTTLExpiresOnServer(t *testing.T) {
	s := cosmostest.NewStore(t)
	ctx := ctxT(t)
	if _, err := s.Create(ctx, sub1, doc(t, sub1, "short", map[string]any{"ttl": 1})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, sub1, doc(t, sub1, "forever", nil)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		page, err := s.ChangeFeed(ctx, "", 10) // the feed does not hide expired items itself
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == 1 && decode(t, page.Items[0].Body)["id"] == "forever" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3s the container still holds %d documents, want only 'forever'", len(page.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestEnsureContainersIsIdempotent(t *testing.T) {
	s := cosmostest.NewStore(t)
	if err := s.EnsureContainers(ctxT(t)); err != nil {
		t.Fatalf("second EnsureContainers: %v", err)
	}
}
