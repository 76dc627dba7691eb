package lifecycle

import (
	"sync"
	"time"
)

// backoff is a retry schedule keyed by operation: of failed ARM
// notifications, and of the CS calls of operations whose calls keep
// failing. It lives in memory on purpose: recording attempts in the
// operation document would cost a Cosmos write per failure, and losing the
// schedule on a restart (or when the timer moves to another instance) only
// means the next attempt comes sooner. Its size is bounded; when full, an
// arbitrary entry is dropped, with the same harmless effect.
type backoff struct {
	base, max time.Duration
	limit     int

	mu sync.Mutex
	m  map[string]retryState
}

type retryState struct {
	attempts int
	next     time.Time
}

func newBackoff(base, max time.Duration, limit int) *backoff {
	return &backoff{base: base, max: max, limit: limit, m: map[string]retryState{}}
}

// due reports whether key may be tried at now.
func (b *backoff) due(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[key]
	return !ok || !now.Before(s.next)
}

// lookup reports whether key has failed before and, if so, when its next
// attempt is due.
func (b *backoff) lookup(key string) (next time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[key]
	return s.next, ok
}

// failed records a failed attempt and returns when the next one is due.
func (b *backoff) failed(key string, now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[key]
	if !ok && len(b.m) >= b.limit {
		for k := range b.m {
			delete(b.m, k)
			break
		}
	}
	delay := b.base
	for i := 0; i < s.attempts && delay < b.max; i++ {
		delay *= 2
	}
	delay = min(delay, b.max)
	s.attempts++
	s.next = now.Add(delay)
	b.m[key] = s
	return s.next
}

// forget drops key once it succeeded (or will never be tried again).
func (b *backoff) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, key)
}

func (b *backoff) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// attempt numbers the next attempt for key, from 1.
func (b *backoff) attempt(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[key].attempts + 1
}
