package activeset

import (
	"github.com/hcpops/hcpops/core/store"
)

// set is the documents a view holds: the operations the active-operations
// query selects and the resource documents the non-terminal ones poll
// against, partition by partition, so that a partition's operations are
// handed out together (a page then lists a cluster's children at once).
type set struct {
	keys     keyer
	ops, res codec
	slab     slab
	parts    map[string]*partition
	// pending are resources an operation needs that no read has answered.
	pending    map[store.DocRef]struct{}
	nOps, nRes int
}

type partition struct {
	ops map[key]opEntry
	res map[key]resEntry
}

type opEntry struct {
	at    loc
	res   key // the resource it needs, when needs
	needs bool
}

// A resource's state: not read yet, held, or known to be gone (missing,
// soft-deleted or expired when last read).
type resState uint8

const (
	resUnknown resState = iota
	resPresent
	resAbsent
)

type resEntry struct {
	// at is the document's record when present; when absent, a
	// header-only record of the version that said so (none when a read
	// found nothing).
	at    loc
	refs  int32
	state resState
}

func newSet() *set {
	return &set{keys: newKeyer(), parts: map[string]*partition{}, pending: map[store.DocRef]struct{}{}}
}

func (s *set) partition(pk string, create bool) *partition {
	p := s.parts[pk]
	if p == nil && create {
		p = &partition{ops: map[key]opEntry{}, res: map[key]resEntry{}}
		s.parts[pk] = p
	}
	return p
}

// dropEmpty forgets a partition that holds nothing any more.
func (s *set) dropEmpty(pk string, p *partition) {
	if len(p.ops) == 0 && len(p.res) == 0 {
		delete(s.parts, pk)
	}
}

// resourceFor is the resource an operation of class c polls against.
func resourceFor(resourceOf func(pk, externalID string) (store.DocRef, bool), h head, c class) (store.DocRef, bool) {
	if c != classActive || resourceOf == nil {
		return store.DocRef{}, false
	}
	ref, ok := resourceOf(h.partitionKey, h.externalID)
	if !ok || ref.PartitionKey != h.partitionKey || ref.ID == "" {
		return store.DocRef{}, false // only a resource of its own partition, as newJob insists
	}
	return ref, true
}

// putOperation holds rec (the operation h describes) in place of what was
// held, and moves its resource reference with it.
func (s *set) putOperation(h head, rec []byte, ref store.DocRef, needs bool) {
	p := s.partition(h.partitionKey, true)
	k := s.keys.of(h.id)
	old, had := p.ops[k]
	e := opEntry{at: s.slab.put(rec), needs: needs}
	if needs {
		e.res = s.keys.of(ref.ID)
		s.acquire(p, ref, e.res)
	}
	if had {
		s.slab.free(old.at)
		if old.needs {
			s.release(h.partitionKey, p, old.res)
		}
	} else {
		s.nOps++
	}
	p.ops[k] = e
}

// removeOperation forgets an operation, and its resource when no other
// operation needs it.
func (s *set) removeOperation(pk string, p *partition, k key) {
	old, had := p.ops[k]
	if !had {
		return
	}
	delete(p.ops, k)
	s.nOps--
	s.slab.free(old.at)
	if old.needs {
		s.release(pk, p, old.res)
	}
	s.dropEmpty(pk, p)
}

func (s *set) acquire(p *partition, ref store.DocRef, k key) {
	e, ok := p.res[k]
	if !ok {
		s.nRes++
		s.pending[ref] = struct{}{}
	}
	e.refs++
	p.res[k] = e
}

func (s *set) release(pk string, p *partition, k key) {
	e, ok := p.res[k]
	if !ok {
		return
	}
	if e.refs--; e.refs > 0 {
		p.res[k] = e
		return
	}
	s.slab.free(e.at)
	delete(p.res, k)
	s.nRes--
	s.dropEmpty(pk, p)
}

// setResource records what a read or the feed said of a held resource:
// rec is its record when present, a header-only one or nil when absent.
func (s *set) setResource(ref store.DocRef, state resState, rec []byte) {
	p := s.partition(ref.PartitionKey, false)
	if p == nil {
		return
	}
	k := s.keys.of(ref.ID)
	e, ok := p.res[k]
	if !ok {
		return // no operation needs it (any more)
	}
	s.slab.free(e.at)
	e.at, e.state = s.slab.put(rec), state
	p.res[k] = e
	delete(s.pending, ref)
}

// resource is what the set holds of a resource.
func (s *set) resource(ref store.DocRef) (resEntry, bool) {
	p := s.partition(ref.PartitionKey, false)
	if p == nil {
		return resEntry{}, false
	}
	e, ok := p.res[s.keys.of(ref.ID)]
	return e, ok
}

// compact moves the records still in use to new chunks when freed ones
// waste a quarter of the slab; records handed out before stay valid.
func (s *set) compact() {
	if !s.slab.wasteful() {
		return
	}
	old := s.slab
	s.slab = slab{}
	for _, p := range s.parts {
		for k, e := range p.ops {
			e.at = s.slab.put(old.get(e.at))
			p.ops[k] = e
		}
		for k, e := range p.res {
			e.at = s.slab.put(old.get(e.at))
			p.res[k] = e
		}
	}
}

// rec is the record at l.
func (s *set) rec(l loc) []byte { return s.slab.get(l) }

func (s *set) stats() Stats {
	held := int64(0)
	for _, c := range s.slab.chunks {
		held += int64(cap(c))
	}
	return Stats{Operations: s.nOps, Resources: s.nRes, Bytes: s.slab.live, Held: held}
}
