package lifecycle

import (
	"sync"
	"sync/atomic"
)

// tally counts what a tick or a dispatch batch did; goroutines share it.
type tally struct {
	polled, changed, dispatched, expired, canceled, notified, errors, backedOff, skipped atomic.Int64

	mu    sync.Mutex
	skips map[string]int // by reason
}

// skip counts an operation left alone for reason.
func (t *tally) skip(reason string) {
	t.skipped.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.skips == nil {
		t.skips = map[string]int{}
	}
	t.skips[reason]++
}

func (t *tally) tickResult() TickResult {
	reasons := make(map[string]int, len(skipReasons))
	t.mu.Lock()
	for _, r := range skipReasons {
		reasons[r] = t.skips[r]
	}
	t.mu.Unlock()
	return TickResult{
		Polled:         int(t.polled.Load()),
		Changed:        int(t.changed.Load()),
		Dispatched:     int(t.dispatched.Load()),
		Expired:        int(t.expired.Load()),
		Canceled:       int(t.canceled.Load()),
		Notified:       int(t.notified.Load()),
		Errors:         int(t.errors.Load()),
		BackedOff:      int(t.backedOff.Load()),
		Skipped:        int(t.skipped.Load()),
		SkippedReasons: reasons,
	}
}

// run is one invocation's work: a change-feed batch or a poll tick. It
// owns what lives as long as the invocation (its counts, the tick's wave
// of CS answers and its worker pool) and reaches through the Engine its
// dependencies and the memories that outlive an invocation.
type run struct {
	*Engine
	count tally
	// wave gathers a tick's CS answers about its objects and the deletes
	// its 404s would complete, decided once the tick's reads are in
	// (wave.go); nil for a dispatch batch, which polls nothing.
	wave *wave
	// pool runs a tick's polls and the completions its wave decides; a
	// dispatch batch runs its own.
	pool *pool
}
