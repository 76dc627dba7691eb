package dst

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"github.com/hcpops/hcpops/core/clusterservice"
)

// sched makes a run deterministic. Every call to a dependency (the
// store, Clusters Service, ARM) first parks at a gate; the driver waits
// until every goroutine of the run's bubble is blocked (synctest.Wait),
// then lets exactly one parked call go, chosen by the seed among the
// parked ones sorted by what they are. So the order in which concurrent
// work reaches its dependencies is drawn from the seed, not left to the
// Go scheduler, and time (the bubble's fake clock) moves only when
// nothing is parked.
type sched struct {
	rng   *rand.Rand
	trace *trace
	done  chan struct{} // closed by end: drive returns
	once  sync.Once

	mu      sync.Mutex
	parked  []*waiter
	arrived chan struct{}
	steps   int
}

type waiter struct {
	key  string // what the call is, and who makes it: sorts the parked
	seq  int
	free chan struct{}
}

func newSched(rng *rand.Rand, tr *trace) *sched {
	return &sched{rng: rng, trace: tr, arrived: make(chan struct{}, 1), done: make(chan struct{})}
}

type actorKey struct{}

// withActor names who works under ctx (an instance's tick, a change-feed
// delivery, the frontend...): it is part of every gate's key.
func withActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

func actorOf(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}

// gate parks the caller until the driver lets it go. The key names the
// operation the call works for, when ctx names one: two of a tick's
// workers reading the same cluster for two operations are then told
// apart, and not by the order they reached the gate (seed 200213 ran two
// ways so).
func (s *sched) gate(ctx context.Context, what string) {
	key := actorOf(ctx) + " " + what
	if op := clusterservice.OperationOf(ctx); op != "" {
		key = actorOf(ctx) + " [" + op + "] " + what
	}
	w := &waiter{key: key, free: make(chan struct{})}
	s.mu.Lock()
	w.seq = len(s.parked)
	s.parked = append(s.parked, w)
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	<-w.free
}

// next lets one parked call go; false when none is parked.
func (s *sched) next() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.parked) == 0 {
		return false
	}
	slices.SortStableFunc(s.parked, func(a, b *waiter) int { return cmp.Compare(a.key, b.key) })
	i := 0
	if len(s.parked) > 1 {
		i = s.rng.IntN(len(s.parked))
	}
	w := s.parked[i]
	s.parked = slices.Delete(s.parked, i, i+1)
	s.steps++
	s.trace.add(w.key)
	close(w.free)
	return true
}

// drive runs the bubble until end: it lets parked calls go one at a
// time and otherwise lets time pass until a timer wakes somebody.
func (s *sched) drive(end time.Time) {
	over := time.After(time.Until(end))
	for {
		synctest.Wait()
		if s.next() {
			continue
		}
		select {
		case <-s.arrived:
		case <-over:
			return
		case <-s.done:
			return
		}
	}
}

// end makes drive return before its time.
func (s *sched) end() { s.once.Do(func() { close(s.done) }) }
