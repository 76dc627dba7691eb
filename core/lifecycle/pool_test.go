package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// The pool runs every function handed to it, never more than its limit
// at once, can be used again after Wait, and skips functions once its
// context ended.
func TestPool(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		rounds int
		tasks  int
		cancel bool
	}{
		{name: "one at a time", limit: 1, rounds: 1, tasks: 50},
		{name: "limit below tasks", limit: 4, rounds: 1, tasks: 200},
		{name: "reused after Wait", limit: 3, rounds: 3, tasks: 40},
		{name: "zero limit runs one", limit: 0, rounds: 1, tasks: 10},
		{name: "no tasks", limit: 8, rounds: 2, tasks: 0},
		{name: "ended context runs nothing", limit: 4, rounds: 1, tasks: 20, cancel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			p := newPool(ctx, tc.limit)
			for range tc.rounds {
				var ran, now, peak atomic.Int64
				var mu sync.Mutex
				for range tc.tasks {
					p.Go(func() {
						n := now.Add(1)
						mu.Lock()
						peak.Store(max(peak.Load(), n))
						mu.Unlock()
						ran.Add(1)
						now.Add(-1)
					})
				}
				p.Wait()
				want := int64(tc.tasks)
				if tc.cancel {
					want = 0
				}
				if got := ran.Load(); got != want {
					t.Errorf("ran %d functions, want %d", got, want)
				}
				if got := peak.Load(); got > int64(max(1, tc.limit)) {
					t.Errorf("%d functions ran at once, limit %d", got, tc.limit)
				}
			}
		})
	}
}

// Go called from several goroutines at once hands every function over.
func TestPoolConcurrentGo(t *testing.T) {
	p := newPool(context.Background(), 5)
	var ran atomic.Int64
	var callers sync.WaitGroup
	for range 8 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for range 100 {
				p.Go(func() { ran.Add(1) })
			}
		}()
	}
	callers.Wait()
	p.Wait()
	if got := ran.Load(); got != 800 {
		t.Fatalf("ran %d functions, want 800", got)
	}
}
