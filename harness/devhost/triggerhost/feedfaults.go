package triggerhost

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// FeedFaults make change-feed delivery harsher than the Functions host's,
// staying within what at-least-once delivery allows, so a soak can show
// that dispatchers are idempotent and do not depend on order.
type FeedFaults struct {
	// Duplicate delivers every batch twice, the second invocation after
	// the first has returned, as after a lost checkpoint.
	Duplicate bool
	// Reorder is the probability that a batch is held back and delivered
	// after the batch that follows it.
	Reorder float64
	// Seed makes the reorder draws repeatable.
	Seed uint64
}

func (f *FeedFaults) validate() error {
	if f == nil {
		return nil
	}
	if math.IsNaN(f.Reorder) || f.Reorder < 0 || f.Reorder > 1 {
		return fmt.Errorf("trigger host: FeedFaults.Reorder %v: want a probability in [0,1]", f.Reorder)
	}
	return nil
}

// rand gives feed listener i a stream of its own; only that listener's
// goroutine draws from it.
func (f *FeedFaults) rand(i int) *rand.Rand {
	if f == nil || f.Reorder == 0 {
		return nil
	}
	return rand.New(rand.NewPCG(f.Seed, uint64(i)))
}

func (f *FeedFaults) duplicate() bool { return f != nil && f.Duplicate }

// FeedStats count what the change-feed listeners delivered.
type FeedStats struct {
	// Batches read from the feed.
	Batches int64
	// Deliveries are invocations of a batch, a duplicate included; the
	// retries of a failed invocation are not counted again.
	Deliveries int64
	// Duplicated batches were delivered a second time.
	Duplicated int64
	// Reordered batches were delivered after their successor.
	Reordered int64
}

type feedCounters struct {
	batches, deliveries, duplicated, reordered atomic.Int64
}

// FeedStats returns the delivery counts so far, over every feed listener.
func (h *Host) FeedStats() FeedStats {
	return FeedStats{
		Batches:    h.stats.batches.Load(),
		Deliveries: h.stats.deliveries.Load(),
		Duplicated: h.stats.duplicated.Load(),
		Reordered:  h.stats.reordered.Load(),
	}
}
