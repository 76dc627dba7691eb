package lifecycle

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/hcpops/hcpops/core/state"
	"github.com/hcpops/hcpops/core/store"
)

// policyReads spaces the policy-list reads of each upgrade under way, by
// operation: the first when its poll first finds CS not at the target,
// then after base, doubling to max (the op's poll backoff, 10 s to 5 min).
// An upgrade takes hours and CS's version, read every poll, is what ends
// it Succeeded; the policy only says that CS failed or cancelled it,
// which may be learned minutes late. Between reads the last state stands.
// In memory, bounded (an LRU), as the other schedules: a restart only
// reads sooner.
type policyReads struct {
	base, max time.Duration

	mu sync.Mutex
	m  *simplelru.LRU[store.DocRef, policyRead]
}

type policyRead struct {
	reads int
	next  time.Time
	state *state.OperationState
}

func newPolicyReads(base, max time.Duration, limit int) *policyReads {
	return &policyReads{base: base, max: max, m: newLRU[policyRead](limit)}
}

// last is the state op's last read left, while its next read is not due.
func (p *policyReads) last(op store.DocRef, now time.Time) (*state.OperationState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.m.Peek(op)
	if !ok || !now.Before(r.next) {
		return nil, false
	}
	c := *r.state // each poll decides on its own copy
	return &c, true
}

// read records a read that left op at s, and schedules the next.
func (p *policyReads) read(op store.DocRef, now time.Time, s *state.OperationState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, _ := p.m.Peek(op)
	delay := p.base
	for i := 0; i < r.reads && delay < p.max; i++ {
		delay *= 2
	}
	p.m.Add(op, policyRead{reads: r.reads + 1, next: now.Add(min(delay, p.max)), state: s})
}

// forget drops op once its upgrade ended.
func (p *policyReads) forget(op store.DocRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.Remove(op)
}
