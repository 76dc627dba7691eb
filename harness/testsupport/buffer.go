package testsupport

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer collects what a running process or goroutine writes while a
// test reads it, and tells a waiting test of every write.
type Buffer struct {
	// Limit bounds Await; 0 is AwaitLimit.
	Limit time.Duration

	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{} // closed by the next write
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote != nil {
		close(b.wrote)
		b.wrote = nil
	}
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// AwaitLimit is how long Await waits before it fails the test: generous,
// since the writer may be a child process on a loaded machine. A test that
// passes never waits for it.
const AwaitLimit = time.Minute

// Await waits until cond holds for what has been written, looking again
// after every write (no polling), and returns what had been written then.
// It fails the test, naming what it waited for, after b.Limit.
func (b *Buffer) Await(t testing.TB, what string, cond func(written string) bool) string {
	t.Helper()
	limit := b.Limit
	if limit <= 0 {
		limit = AwaitLimit
	}
	deadline := time.After(limit)
	for {
		b.mu.Lock()
		written := b.b.String()
		if b.wrote == nil {
			b.wrote = make(chan struct{})
		}
		wrote := b.wrote
		b.mu.Unlock()
		if cond(written) {
			return written
		}
		select {
		case <-wrote:
		case <-deadline:
			t.Fatalf("%s: not within %s; written so far:\n%s", what, limit, written)
			return written
		}
	}
}

// AwaitText waits until text has been written; see Await.
func (b *Buffer) AwaitText(t testing.TB, text string) string {
	t.Helper()
	return b.Await(t, "waiting for "+strings.TrimSpace(text), func(s string) bool { return strings.Contains(s, text) })
}
