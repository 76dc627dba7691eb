package lifecycle

import (
	"context"
	"sync"

	"github.com/hcpops/hcpops/core/store"
)

// keyedLock is a mutex per operation document whose entries disappear
// when nobody holds or waits for them, so its size is bounded by the work
// in flight. It is written here because a wait must end with its context:
// a dispatch queued behind one whose CS call hangs gives up at its
// invocation's deadline. The per-key mutexes maintained as libraries
// (moby/locker and its kind) block without a context, and x/sync's
// semaphore would only replace the one-slot channel below.
type keyedLock struct {
	mu sync.Mutex
	m  map[store.DocRef]*lockEntry
}

type lockEntry struct {
	sem  chan struct{}
	refs int
}

func newKeyedLock() *keyedLock {
	return &keyedLock{m: map[store.DocRef]*lockEntry{}}
}

// lock waits for key, or for ctx to end; the returned func releases it.
func (k *keyedLock) lock(ctx context.Context, key store.DocRef) (func(), error) {
	k.mu.Lock()
	e := k.m[key]
	if e == nil {
		e = &lockEntry{sem: make(chan struct{}, 1)}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	select {
	case e.sem <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-e.sem
				k.release(key, e)
			})
		}, nil
	case <-ctx.Done():
		k.release(key, e)
		return nil, ctx.Err()
	}
}

func (k *keyedLock) release(key store.DocRef, e *lockEntry) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(k.m, key)
	}
}

// size is the number of keys held or waited for.
func (k *keyedLock) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
