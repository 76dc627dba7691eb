package lifecycle

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/hcpops/hcpops/core/state"
	"github.com/hcpops/hcpops/core/store"
)

// policyReads halves the policy-list reads of each upgrade under way, by
// operation: the list is read on every other poll, the last answer
// standing in between. CS's version, read every poll, is what ends an
// upgrade Succeeded; the policy is what tells that CS failed or cancelled
// it, and reading it every second poll has that seen within two ticks of
// CS reporting it (a time-based backoff let it wait five minutes). In
// memory, bounded (an LRU), as the other schedules: a restart only reads
// sooner.
type policyReads struct {
	mu sync.Mutex
	m  *simplelru.LRU[store.DocRef, policyRead]
}

type policyRead struct {
	// fresh: read on the op's last poll, so this poll may use it.
	fresh bool
	state *state.OperationState
}

func newPolicyReads(limit int) *policyReads {
	return &policyReads{m: newLRU[policyRead](limit)}
}

// last is the state op's previous poll read, when that poll read it; the
// poll after this one reads again.
func (p *policyReads) last(op store.DocRef) (*state.OperationState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.m.Peek(op)
	if !ok || !r.fresh {
		return nil, false
	}
	p.m.Add(op, policyRead{state: r.state})
	c := *r.state // each poll decides on its own copy
	return &c, true
}

// read records a read that left op at s.
func (p *policyReads) read(op store.DocRef, s *state.OperationState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.Add(op, policyRead{fresh: true, state: s})
}

// forget drops op once its upgrade ended.
func (p *policyReads) forget(op store.DocRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.Remove(op)
}
