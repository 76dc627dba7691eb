package embedded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
)

func openCommitter(t *testing.T) *committer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	c := newCommitter(db, path)
	c.queued = make(chan struct{}, 1)
	return c
}

func put(key string) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(key), []byte("v")) }
}

func has(t *testing.T, c *committer, key string) bool {
	t.Helper()
	var found bool
	if err := c.db.View(func(tx *bolt.Tx) error { found = tx.Bucket([]byte("b")).Get([]byte(key)) != nil; return nil }); err != nil {
		t.Fatal(err)
	}
	return found
}

// queueWhileBlocked holds a first write inside its transaction, queues
// the given writes behind it, then lets it finish. It returns each queued
// write's error, in order.
func queueWhileBlocked(t *testing.T, c *committer, fns []func(*bolt.Tx) error) []error {
	t.Helper()
	inside, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- c.update(func(tx *bolt.Tx) error {
			close(inside)
			<-release
			return put("first")(tx)
		})
	}()
	<-inside
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		// One at a time, so that the queue holds them in the given order:
		// what a test says about write i depends on the writes before it.
		wg.Go(func() { errs[i] = c.update(fn) })
		waitQueued(t, c, i+1)
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
	return errs
}

// waitQueued waits, with a generous deadline, until n writes are queued,
// looking again each time the committer says the queue grew.
func waitQueued(t *testing.T, c *committer, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		got := len(c.queue)
		c.mu.Unlock()
		if got == n {
			return
		}
		select {
		case <-c.queued:
		case <-deadline:
			t.Fatalf("%d of %d writes queued", got, n)
		}
	}
}

func TestCommitterSharesOneTransaction(t *testing.T) {
	c := openCommitter(t)
	var fns []func(*bolt.Tx) error
	for i := range 20 {
		fns = append(fns, put(fmt.Sprint("k", i)))
	}
	for i, err := range queueWhileBlocked(t, c, fns) {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
		if !has(t, c, fmt.Sprint("k", i)) {
			t.Errorf("write %d not committed", i)
		}
	}
	if n := c.transactions.Load(); n != 2 {
		t.Errorf("transactions = %d, want 2 (the first write's, then one for the 20 queued)", n)
	}
}

func TestCommitterFailureStaysWithItsWrite(t *testing.T) {
	c := openCommitter(t)
	errOwn := errors.New("this write's own failure")
	runs := make([]int, 3)
	var mu sync.Mutex
	counted := func(i int, fn func(*bolt.Tx) error) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			mu.Lock()
			runs[i]++
			mu.Unlock()
			return fn(tx)
		}
	}
	errs := queueWhileBlocked(t, c, []func(*bolt.Tx) error{
		counted(0, put("a")),
		counted(1, func(tx *bolt.Tx) error {
			if err := put("partial")(tx); err != nil {
				return err
			}
			return errOwn
		}),
		counted(2, func(*bolt.Tx) error { panic("boom") }),
	})
	if errs[0] != nil || !has(t, c, "a") {
		t.Errorf("healthy write: %v (committed %v)", errs[0], has(t, c, "a"))
	}
	if !errors.Is(errs[1], errOwn) || has(t, c, "partial") {
		t.Errorf("failing write: %v (its partial write committed: %v)", errs[1], has(t, c, "partial"))
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "boom") {
		t.Errorf("panicking write: %v, want its panic as an error", errs[2])
	}
	if runs[0] < 2 {
		t.Errorf("healthy write ran %d times; the failures should have made it run again", runs[0])
	}
	// The committer is still usable.
	if err := c.update(put("after")); err != nil || !has(t, c, "after") {
		t.Errorf("write after the failures: %v", err)
	}
}

// TestConcurrentWritesGetTheirOwnResults: writers racing on one durable
// store share commits, yet each sees exactly its own outcome: the stale
// etags fail alone and every item returned is the one stored.
func TestConcurrentWritesGetTheirOwnResults(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	const pk, n = "0000000e-5eed-4000-8000-00000000000e", 32
	items := make([]store.Item, n)
	for i := range n {
		if items[i], err = s.Create(ctx, pk, numberedDoc(i, 0)); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]store.Item, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			etag := items[i].ETag
			if i%4 == 0 {
				etag = `"stale"`
			}
			if i%2 == 0 {
				got[i], errs[i] = s.Replace(ctx, pk, fmt.Sprint("d", i), numberedDoc(i, 1), etag)
				return
			}
			var out []store.Item
			out, errs[i] = s.Batch(ctx, pk, []store.BatchOp{{Kind: store.OpReplace, ID: fmt.Sprint("d", i),
				Body: numberedDoc(i, 1), IfMatch: etag}})
			if len(out) == 1 {
				got[i] = out[0]
			}
		})
	}
	wg.Wait()
	for i := range n {
		stored, err := s.Get(ctx, pk, fmt.Sprint("d", i))
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if !errors.Is(errs[i], store.ErrPreconditionFailed) || stored.ETag != items[i].ETag {
				t.Errorf("d%d with a stale etag: %v, stored etag %s (want unchanged %s)", i, errs[i], stored.ETag, items[i].ETag)
			}
			continue
		}
		if errs[i] != nil || got[i].ETag != stored.ETag || string(got[i].Body) != string(stored.Body) {
			t.Errorf("d%d: %v; returned etag %s, stored %s", i, errs[i], got[i].ETag, stored.ETag)
		}
	}
}

func numberedDoc(i, v int) []byte {
	return []byte(fmt.Sprintf(`{"id":"d%d","partitionKey":"0000000e-5eed-4000-8000-00000000000e","v":%d}`, i, v))
}
