package lifecycle

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/hcpops/hcpops/core/store"
)

// backoff is a retry schedule keyed by operation document: of failed ARM
// notifications, and of the CS calls of operations whose calls keep
// failing. It lives in memory on purpose: recording attempts in the
// operation document would cost a Cosmos write per failure. Losing the
// schedule on a restart (or when the timer moves to another instance)
// only means the next CS attempt comes sooner; a notification's is taken
// up again from when it fell due (resume), so its attempt numbers, which
// the notifications alert reads, go on rather than start at 1. Its size is bounded by an LRU
// (golang-lru): when full, the entry that failed longest ago makes room,
// with the same harmless effect.
//
// Why not client-go's rate-limiting workqueue, as ARO-HCP's controllers
// use: its limiter computes the same base·2ⁿ delay, but the queue is
// push-based (a goroutine hands each item back at its time on the wall
// clock), while a tick pulls: it walks the active set and asks of every
// operation, on the engine's clock, whether its next attempt is due. The
// limiter alone keeps an unbounded failure count per item and would still
// leave the due times to keep here; linking it (k8s.io/client-go v0.37.2)
// brings klog, logr, apimachinery's util/runtime and util/sets,
// k8s.io/utils/clock and x/time/rate, and moves protobuf, oauth2 and
// reflect2 to newer versions for the whole module.
type backoff struct {
	base, max time.Duration
	// n is m's length, so lookup and forget, which a tick makes for every
	// operation, skip the lock (one for every worker and page preparer)
	// while nothing is failing.
	n atomic.Int64

	mu sync.Mutex
	m  *simplelru.LRU[store.DocRef, retryState]
}

type retryState struct {
	attempts int
	next     time.Time
}

func newBackoff(base, max time.Duration, limit int) *backoff {
	return &backoff{base: base, max: max, m: newLRU[retryState](limit)}
}

// newLRU is a bounded map by document; a limit below 1 holds one entry.
func newLRU[V any](limit int) *simplelru.LRU[store.DocRef, V] {
	m, err := simplelru.NewLRU[store.DocRef, V](max(1, limit), nil)
	if err != nil {
		panic(err) // only for a size below 1, ruled out above
	}
	return m
}

// due reports whether key may be tried at now.
func (b *backoff) due(key store.DocRef, now time.Time) bool {
	next, ok := b.lookup(key)
	return !ok || !now.Before(next)
}

// lookup reports whether key has failed before and, if so, when its next
// attempt is due.
func (b *backoff) lookup(key store.DocRef) (next time.Time, ok bool) {
	if b.n.Load() == 0 {
		return time.Time{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m.Peek(key)
	return s.next, ok
}

// failed records a failed attempt and returns when the next one is due.
func (b *backoff) failed(key store.DocRef, now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, _ := b.m.Peek(key)
	delay := b.base
	for i := 0; i < s.attempts && delay < b.max; i++ {
		delay *= 2
	}
	s.attempts++
	s.next = now.Add(min(delay, b.max))
	b.m.Add(key, s)
	b.n.Store(int64(b.m.Len()))
	return s.next
}

// forget drops key once it succeeded (or will never be tried again).
func (b *backoff) forget(key store.DocRef) {
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m.Remove(key)
	b.n.Store(int64(b.m.Len()))
}

func (b *backoff) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m.Len()
}

// resume takes up the schedule of a key this process holds nothing for
// (it started since, or the LRU let the entry go) from since, when its
// first attempt fell due: the attempts the schedule had due by now,
// before this one, count as made. A restart then neither numbers the next
// attempt 1 again (an alert reads the number) nor hurries it.
func (b *backoff) resume(key store.DocRef, since, now time.Time) {
	if since.IsZero() || !now.After(since) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.m.Peek(key); ok {
		return
	}
	if n := b.slots(now.Sub(since)) - 1; n > 0 {
		b.m.Add(key, retryState{attempts: n, next: now})
		b.n.Store(int64(b.m.Len()))
	}
}

// slots counts the attempts the schedule has due within elapsed of the
// first: the first at 0, each next one failed's delay later (base·2ⁿ, at
// most max), as failed spaces them.
func (b *backoff) slots(elapsed time.Duration) int {
	if b.base <= 0 {
		return 1
	}
	n, at, delay := 1, time.Duration(0), b.base
	for delay < b.max {
		if at += delay; at > elapsed {
			return n
		}
		n++
		delay *= 2
	}
	// At the cap the slots are max apart: count them without a loop.
	return n + int((elapsed-at)/b.max)
}

// attempt numbers the next attempt for key, from 1.
func (b *backoff) attempt(key store.DocRef) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, _ := b.m.Peek(key)
	return s.attempts + 1
}
