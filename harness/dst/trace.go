package dst

import (
	"fmt"
	"hash"
	"hash/fnv"
	"strings"
	"sync"
	"time"
)

// trace is what a run did, event for event: every gate a call passed
// (hashed, so two runs of a seed can be compared whole) and the events
// that matter to a reader (actions, faults, terminal writes, verdicts),
// kept in full up to a bound.
type trace struct {
	start time.Time

	mu      sync.Mutex
	sum     hash.Hash64
	steps   int
	notable []string
	dropped int
	// steps, when kept, are every gate's key in order: how a replay
	// that ran another way is told apart from its first run.
	keep  bool
	every []string
}

const maxNotable = 4000

func newTrace(start time.Time) *trace { return &trace{start: start, sum: fnv.New64a()} }

// add counts one gate step.
func (t *trace) add(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps++
	if t.keep {
		t.every = append(t.every, fmt.Sprintf("%s %s", time.Since(t.start), key))
	}
	_, _ = t.sum.Write([]byte(key))
	_, _ = t.sum.Write([]byte{0})
}

// note records an event a reader of a failure needs.
func (t *trace) note(format string, args ...any) {
	line := fmt.Sprintf("%8s  %s", time.Since(t.start).Truncate(time.Millisecond), fmt.Sprintf(format, args...))
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.sum.Write([]byte(line))
	if len(t.notable) >= maxNotable {
		t.dropped++
		return
	}
	t.notable = append(t.notable, line)
}

// digest identifies the run: two runs of a seed that did the same
// things in the same order have the same digest.
func (t *trace) digest() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Sprintf("%016x/%d", t.sum.Sum64(), t.steps)
}

// lines are the notable events; with about set, only those naming one
// of its strings (a failure's ids), plus every fault window: the
// shortened trace a failure prints.
func (t *trace) lines(about ...string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(about) == 0 {
		return append([]string(nil), t.notable...)
	}
	var out []string
	for _, l := range t.notable {
		if strings.Contains(l, "fault ") || strings.Contains(l, "restart") || strings.Contains(l, "instance") {
			out = append(out, l)
			continue
		}
		for _, a := range about {
			if a != "" && strings.Contains(l, a) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}
