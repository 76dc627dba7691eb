package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// The pool runs every function handed to it, as many at once as its
// limit and never more, can be used again after Wait, and skips functions
// once its context ended. Each function blocks until the test releases
// them; in a synctest bubble, synctest.Wait returns once every goroutine
// is blocked, so the count then is exactly what the pool started: a pool
// that ran them one by one would be short of its limit, one that ignored
// it would be over.
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
			synctest.Test(t, func(t *testing.T) {
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
					synctest.Wait() // every worker waits on release, the submitter on a worker
					if got := now.Load(); got != want {
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
