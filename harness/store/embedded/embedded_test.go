package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
)

const pk = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"

func body(id string, extra string) []byte {
	return []byte(`{"id":"` + id + `","partitionKey":"` + pk + `","resourceID":"/subscriptions/` + pk + `/x/` + id + `"` + extra + `}`)
}

func opBody(id, status string) []byte {
	return []byte(`{"id":"` + id + `","partitionKey":"` + pk + `","ttl":604800,` +
		`"resourceID":"/subscriptions/` + pk + `/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/` + id + `",` +
		`"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"status":"` + status + `"}}`)
}

func mustCreate(t testing.TB, s *Store, b []byte) store.Item {
	t.Helper()
	item, err := s.Create(context.Background(), pk, b)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return item
}

// count returns how many keys a bucket physically holds.
func count(t testing.TB, s *Store, bucket []byte) int {
	t.Helper()
	n := 0
	if err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucket).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatalf("View: %v", err)
	}
	return n
}

func TestSystemFieldsFollowTheClock(t *testing.T) {
	s, clock := openTest(t)
	item := mustCreate(t, s, body("a", `,"_ts":1,"_etag":"\"mine\""`))
	if !regexp.MustCompile(`^"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-0000-[0-9a-f]{12}"$`).MatchString(item.ETag) {
		t.Errorf("etag %s is not a quoted Cosmos-style etag", item.ETag)
	}
	var d map[string]any
	if err := json.Unmarshal(item.Body, &d); err != nil {
		t.Fatal(err)
	}
	if d["_ts"] != float64(clock.Now().Unix()) || d["_etag"] != item.ETag || d["_attachments"] != "attachments/" {
		t.Errorf("system fields = %v %v %v", d["_ts"], d["_etag"], d["_attachments"])
	}
	if !strings.HasSuffix(string(item.Body), `"_ts":`+fmt.Sprint(clock.Now().Unix())+`}`) {
		t.Errorf("system fields are not appended last: %s", item.Body)
	}
	clock.Advance(time.Minute)
	next, err := s.Replace(context.Background(), pk, "a", item.Body, item.ETag)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	var n map[string]any
	_ = json.Unmarshal(next.Body, &n)
	if n["_rid"] != d["_rid"] || n["_self"] != d["_self"] {
		t.Errorf("_rid/_self changed on replace: %v %v -> %v %v", d["_rid"], d["_self"], n["_rid"], n["_self"])
	}
	if n["_ts"] != float64(clock.Now().Unix()) {
		t.Errorf("_ts = %v after replace, want %d", n["_ts"], clock.Now().Unix())
	}
}

func TestSoftDeleteUsesTheClockAndExpires(t *testing.T) {
	s, clock := openTest(t)
	ctx := context.Background()
	mustCreate(t, s, opBody("op", "Accepted"))
	if err := s.SoftDelete(ctx, pk, "op"); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	page, err := s.ChangeFeed(ctx, "", 10)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("ChangeFeed = %d items, %v", len(page.Items), err)
	}
	if want := `"deletionTimestamp":"2026-03-14T02:00:00Z"`; !bytes.Contains(page.Items[0].Body, []byte(want)) {
		t.Errorf("soft-deleted body lacks %s: %s", want, page.Items[0].Body)
	}
	// A soft-deleted document is gone for writes too.
	if _, err := s.Replace(ctx, pk, "op", opBody("op", "Failed"), page.Items[0].ETag); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Replace of a soft-deleted document: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Create(ctx, pk, opBody("op", "Accepted")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Create within the soft-delete ttl: err = %v, want ErrConflict", err)
	}
	clock.Advance(30 * time.Second)
	if _, err := s.Create(ctx, pk, opBody("op", "Accepted")); err != nil {
		t.Errorf("Create after the soft-delete ttl: %v", err)
	}
}

func TestTTLCountsFromTheLastWrite(t *testing.T) {
	s, clock := openTest(t)
	ctx := context.Background()
	item := mustCreate(t, s, body("a", `,"ttl":10`))
	clock.Advance(8 * time.Second)
	item, err := s.Replace(ctx, pk, "a", item.Body, item.ETag)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	clock.Advance(8 * time.Second) // 16 s after create, 8 s after replace
	if _, err := s.Get(ctx, pk, "a"); err != nil {
		t.Fatalf("Get 8 s after the replace: %v", err)
	}
	clock.Advance(2 * time.Second) // exactly _ts + ttl
	if _, err := s.Get(ctx, pk, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get at _ts+ttl: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Replace(ctx, pk, "a", item.Body, item.ETag); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Replace of an expired document: err = %v, want ErrNotFound", err)
	}
}

// sweepsHeard is an Option that reports every sweep the sweeper makes.
func sweepsHeard() (Option, <-chan int) {
	ch := make(chan int, 64)
	return func(c *config) {
		c.swept = func(n int, _ error) {
			select {
			case ch <- n:
			default: // the test is not listening; it needs only one
			}
		}
	}, ch
}

// awaitSweep waits for a sweep that removed want documents.
func awaitSweep(t *testing.T, sweeps <-chan int, want int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case n := <-sweeps:
			if n == want {
				return
			}
		case <-deadline:
			t.Fatalf("no sweep removed %d documents within 10s", want)
		}
	}
}

func TestSweeperRemovesExpiredDocuments(t *testing.T) {
	heard, sweeps := sweepsHeard()
	s, clock := openTest(t, heard)
	for i := range 3 {
		mustCreate(t, s, body(fmt.Sprint("short", i), `,"ttl":5`))
	}
	mustCreate(t, s, opBody("op", "Accepted")) // 7 days
	mustCreate(t, s, body("forever", ``))
	if n := count(t, s, bucketExpiry); n != 4 {
		t.Fatalf("expiry index holds %d entries, want 4", n)
	}
	clock.Advance(5 * time.Second)
	awaitSweep(t, sweeps, 3)
	if n := count(t, s, bucketDocs); n != 2 {
		t.Fatalf("sweeper left %d documents, want 2", n)
	}
	if f, e, o := count(t, s, bucketFeed), count(t, s, bucketExpiry), count(t, s, bucketOps); f != 2 || e != 1 || o != 1 {
		t.Errorf("indexes after sweep: feed %d, expiry %d, ops %d; want 2, 1, 1", f, e, o)
	}
}

func TestSweepInBatches(t *testing.T) {
	s, clock := openTest(t, WithSweepInterval(time.Hour))
	ops := make([]store.BatchOp, 0, store.MaxBatchOps)
	for i := range sweepBatch + 50 {
		ops = append(ops, store.BatchOp{Kind: store.OpCreate, Body: body(fmt.Sprint("d", i), `,"ttl":1`)})
		if len(ops) == store.MaxBatchOps || i == sweepBatch+49 {
			if _, err := s.Batch(context.Background(), pk, ops); err != nil {
				t.Fatalf("Batch: %v", err)
			}
			ops = ops[:0]
		}
	}
	clock.Advance(time.Second)
	n, err := s.sweep(context.Background())
	if err != nil || n != sweepBatch+50 {
		t.Fatalf("sweep = %d, %v; want %d", n, err, sweepBatch+50)
	}
	if c := count(t, s, bucketDocs); c != 0 {
		t.Errorf("%d documents left", c)
	}
}

func TestStreamReleasesTheTransactionBetweenPages(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	for i := range 30 {
		mustCreate(t, s, opBody(fmt.Sprint("op", i), "Accepted"))
	}
	pages, seen := 0, 0
	err := s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 7}, func(items []store.Item) error {
		pages++
		seen += len(items)
		if open := s.db.Stats().OpenTxN; open != 0 {
			t.Errorf("page %d: %d read transactions open during the callback", pages, open)
		}
		// Grow the file from inside the callback: bbolt remaps, which would
		// wait forever for a read transaction held across the callback.
		if pages == 1 {
			done := make(chan error, 1)
			go func() {
				big := strings.Repeat("x", 512<<10)
				for i := range 20 {
					if _, err := s.Create(ctx, pk, body(fmt.Sprint("big", i), `,"blob":"`+big+`"`)); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("growing the file: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a writer growing the file is blocked by the stream")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ActiveOperations: %v", err)
	}
	if pages != 5 || seen != 30 {
		t.Errorf("%d operations in %d pages, want 30 in 5", seen, pages)
	}
}

func TestReopenKeepsDocumentsAndFeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	clock := newFakeClock()
	ctx := context.Background()
	s, err := Open(path, WithClock(clock))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	a := mustCreate(t, s, body("a", ``))
	mustCreate(t, s, body("b", ``))
	page, err := s.ChangeFeed(ctx, "", 10)
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("ChangeFeed: %d items, %v", len(page.Items), err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Get(ctx, pk, "a"); err == nil {
		t.Error("Get on a closed store succeeded")
	}

	s, err = Open(path, WithClock(clock))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if got, err := s.Get(ctx, pk, "a"); err != nil || got.ETag != a.ETag {
		t.Fatalf("Get after reopen = %s, %v; want etag %s", got.ETag, err, a.ETag)
	}
	c := mustCreate(t, s, body("c", ``))
	if c.ETag == a.ETag {
		t.Errorf("etag %s reused after reopen", c.ETag)
	}
	next, err := s.ChangeFeed(ctx, page.Continuation, 10)
	if err != nil || len(next.Items) != 1 || next.Items[0].ETag != c.ETag {
		t.Errorf("feed after reopen = %d items, %v; want just c", len(next.Items), err)
	}
}

// syncBuffer collects log output written from the sweeper goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSweeperLogs(t *testing.T) {
	var logs syncBuffer
	heard, sweeps := sweepsHeard()
	s, clock := openTest(t, heard, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	mustCreate(t, s, body("a", `,"ttl":1`))
	clock.Advance(time.Second)
	awaitSweep(t, sweeps, 1)
	if !strings.Contains(logs.String(), "swept expired documents") {
		t.Fatalf("no sweep logged; logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "count=1") {
		t.Errorf("sweep log lacks count=1:\n%s", logs.String())
	}
}
