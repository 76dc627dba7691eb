package activeset

import (
	"maps"

	"github.com/hcpops/hcpops/core/store"
)

// set is the documents a view holds: the operations the active-operations
// query selects and the resource documents the non-terminal ones poll
// against, partition by partition, so that a partition's operations are
// handed out together (a page then lists a cluster's children at once).
type set struct {
	building bool   // a full read's: tables are sealed on commit
	others   others // keys of ids that are no UUID
	// heads and the codecs hold sync.Pools, which the runtime lists
	// until two collections after their last use: apart from the set, so
	// that list does not keep a replaced set (its slab) alive too.
	heads    *headReaders
	ops, res *codec
	slab     slab
	parts    map[string]*partition
	// pending are resources an operation needs that no read has answered.
	pending    map[store.DocRef]struct{}
	nOps, nRes int
}

type partition struct {
	ops table[opEntry]
	res table[resEntry]
}

type opEntry struct {
	k     key
	at    loc
	res   key // the resource it needs, when needs
	needs bool
}

func (e opEntry) entryKey() key { return e.k }

// A resource's state: not read yet, held, or known to be gone (missing,
// soft-deleted or expired when last read).
type resState uint8

const (
	resUnknown resState = iota
	resPresent
	resAbsent
)

type resEntry struct {
	k key
	// at is the document's record when present; when absent, a
	// header-only record of the version that said so (none when a read
	// found nothing).
	at    loc
	refs  int32
	state resState
}

func (e resEntry) entryKey() key { return e.k }

func newSet() *set {
	return &set{others: others{}, heads: &headReaders{}, ops: &codec{}, res: &codec{},
		parts: map[string]*partition{}, pending: map[store.DocRef]struct{}{}}
}

func (s *set) partition(pk string, create bool) *partition {
	p := s.parts[pk]
	if p == nil && create {
		p = &partition{}
		if s.building {
			p.ops.building()
			p.res.building()
		}
		s.parts[pk] = p
	}
	return p
}

// dropEmpty forgets a partition that holds nothing any more.
func (s *set) dropEmpty(pk string, p *partition) {
	if p.ops.len() == 0 && p.res.len() == 0 {
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
	k := s.others.of(h.id)
	old, had := p.ops.get(k)
	e := opEntry{k: k, at: s.slab.put(rec), needs: needs}
	if needs {
		e.res = s.others.of(ref.ID)
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
	p.ops.put(e)
}

// removeOperation forgets an operation, and its resource when no other
// operation needs it.
func (s *set) removeOperation(pk string, p *partition, k key) {
	old, had := p.ops.get(k)
	if !had {
		return
	}
	p.ops.del(k)
	s.nOps--
	s.slab.free(old.at)
	if old.needs {
		s.release(pk, p, old.res)
	}
	s.dropEmpty(pk, p)
}

func (s *set) acquire(p *partition, ref store.DocRef, k key) {
	e, ok := p.res.get(k)
	if !ok {
		e.k = k
		s.nRes++
		s.pending[ref] = struct{}{}
	}
	e.refs++
	p.res.put(e)
}

func (s *set) release(pk string, p *partition, k key) {
	e, ok := p.res.get(k)
	if !ok {
		return
	}
	if e.refs--; e.refs > 0 {
		p.res.put(e)
		return
	}
	s.slab.free(e.at)
	p.res.del(k)
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
	k, ok := s.others.lookup(ref.ID)
	if !ok {
		return
	}
	e, ok := p.res.get(k)
	if !ok {
		return // no operation needs it (any more)
	}
	s.slab.free(e.at)
	e.at, e.state = s.slab.put(rec), state
	p.res.put(e)
	delete(s.pending, ref)
}

// resource is what the set holds of a resource.
func (s *set) resource(ref store.DocRef) (resEntry, bool) {
	p := s.partition(ref.PartitionKey, false)
	if p == nil {
		return resEntry{}, false
	}
	k, ok := s.others.lookup(ref.ID)
	if !ok {
		return resEntry{}, false
	}
	return p.res.get(k)
}

// compact moves the records still in use to new chunks when freed ones
// waste a quarter of the slab; records handed out before stay valid.
func (s *set) compact() {
	if !s.slab.wasteful() {
		return
	}
	old := s.slab
	s.slab = slab{chunk: old.chunk}
	for _, p := range s.parts {
		for i := range p.ops.entries {
			p.ops.entries[i].at = s.slab.put(old.get(p.ops.entries[i].at))
		}
		for i := range p.res.entries {
			p.res.entries[i].at = s.slab.put(old.get(p.res.entries[i].at))
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

// seal ends a full read's building: every table sorted.
func (s *set) seal() {
	for _, p := range s.parts {
		p.ops.seal()
		p.res.seal()
	}
	s.building = false
	s.shrinkPending()
}

// shrinkPending gives back what pending grew to: a map never shrinks, and
// a full read puts every resource in it before the reads answer them,
// and the room would otherwise be held for the view's life
// (docs/decisions/active-set-view.md#the-pending-map).
func (s *set) shrinkPending() {
	s.pending = maps.Clone(s.pending)
	if s.pending == nil {
		s.pending = map[store.DocRef]struct{}{}
	}
}
