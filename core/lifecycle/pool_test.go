package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The pool runs every function handed to it, as many at once as its
// limit and never more, can be used again after Wait, and skips functions
// once its context ended. Each function blocks until the test releases
// them, so the pool must reach its limit (a pool that ran them one by one
// would never get there) and stay at it (one that ignored its limit would
// start more while they wait).
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
		{name: "tasks below limit", limit: 8, rounds: 1, tasks: 5},
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
			want := int64(min(max(1, tc.limit), tc.tasks)) // at once
			if tc.cancel {
				want = 0
			}
			for round := range tc.rounds {
				var ran, now, peak atomic.Int64
				release := make(chan struct{})
				submitted := make(chan struct{})
				go func() { // Go blocks while every worker is busy
					defer close(submitted)
					for range tc.tasks {
						p.Go(func() {
							n := now.Add(1)
							for {
								if old := peak.Load(); n <= old || peak.CompareAndSwap(old, n) {
									break
								}
							}
							<-release
							ran.Add(1)
							now.Add(-1)
						})
					}
				}()
				reached := waitUntil(func() bool { return now.Load() >= want }, 5*time.Second)
				time.Sleep(50 * time.Millisecond) // room for one more to start, were the limit not kept
				if !reached {
					t.Errorf("round %d: %d ran at once after 5s, want %d (limit %d)", round, now.Load(), want, tc.limit)
				}
				if got := peak.Load(); got != want {
					t.Errorf("round %d: %d ran at once while blocked, want %d (limit %d)", round, got, want, tc.limit)
				}
				close(release)
				<-submitted
				p.Wait()
				wantRan := int64(tc.tasks)
				if tc.cancel {
					wantRan = 0
				}
				if got := ran.Load(); got != wantRan {
					t.Errorf("round %d: ran %d functions, want %d", round, got, wantRan)
				}
				if got := peak.Load(); got != want {
					t.Errorf("round %d: %d ran at once in all, want %d", round, got, want)
				}
			}
		})
	}
}

// waitUntil polls cond until it holds or d passes; false on the deadline.
func waitUntil(cond func() bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
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
