package soak

import (
	"fmt"
	"slices"
	"sync"
)

// writeKind is what an acknowledged write did to a document.
type writeKind int

const (
	writeCreate writeKind = iota
	writeReplace
	writeDelete
)

func (k writeKind) String() string {
	return [...]string{"create", "replace", "delete"}[k]
}

// write is one document write the store acknowledged.
type write struct {
	kind    writeKind
	doc     docVersion // the version written; only the key for a delete
	ifMatch string     // what the writer sent, before any test-only stripping
}

// writeLedger records every acknowledged write to the Resources
// container, from both processes, as the Cosmos proxy sees them.
type writeLedger struct {
	mu     sync.Mutex
	writes map[docKey][]write
	kinds  [3]int
}

func newWriteLedger() *writeLedger { return &writeLedger{writes: map[docKey][]write{}} }

func (l *writeLedger) add(w write) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes[w.doc.key] = append(l.writes[w.doc.key], w)
	l.kinds[w.kind]++
}

// snapshot copies the writes per document.
func (l *writeLedger) snapshot() map[docKey][]write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[docKey][]write, len(l.writes))
	for k, ws := range l.writes {
		out[k] = slices.Clone(ws)
	}
	return out
}

func (l *writeLedger) counts() (creates, replaces, deletes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kinds[writeCreate], l.kinds[writeReplace], l.kinds[writeDelete]
}

// finalRead is a document's state when the run ended: found, or gone
// (soft-deleted, expired or deleted).
type finalRead struct {
	found bool
	doc   docVersion
}

// checkVersions proves there was no lost or stomped update. Every
// incarnation of a document (a create up to a delete) must have been
// written with instanceVersion 1, 2, ... n, each exactly once (a write
// made from a stale read repeats a version); the change feed must have
// shown only acknowledged versions, in strictly increasing order; and the
// final read must be version n with the last write's etag, or the
// document must be gone after a delete.
func checkVersions(writes map[docKey][]write, observed map[docKey][]docVersion, final map[docKey]finalRead) []string {
	var problems []string
	for _, k := range sortedKeys(writes) {
		ws := writes[k]
		name := docName(k, ws)
		for _, inc := range incarnations(ws) {
			problems = append(problems, checkIncarnation(name, inc)...)
		}
		last := ws[len(ws)-1]
		f, read := final[k]
		switch {
		case !read:
		case f.found && last.kind == writeDelete:
			problems = append(problems, fmt.Sprintf("%s: still readable (version %d) after its delete was acknowledged", name, f.doc.version))
		case f.found && (f.doc.version != last.doc.version || f.doc.etag != last.doc.etag):
			problems = append(problems, fmt.Sprintf("%s: final read is version %d etag %s, but the last acknowledged write was version %d etag %s (%d writes)",
				name, f.doc.version, f.doc.etag, last.doc.version, last.doc.etag, len(ws)))
		case !f.found && last.kind != writeDelete && !last.doc.deleted:
			problems = append(problems, fmt.Sprintf("%s: gone at the end, yet its last acknowledged write (version %d) was no delete", name, last.doc.version))
		}
	}
	for _, k := range sortedKeys(observed) {
		problems = append(problems, checkObserved(docName(k, writes[k]), observed[k], writes[k])...)
	}
	return problems
}

// docName names a document in reports: its resourceID when a write
// carried one (operations' name their target), and its key.
func docName(k docKey, ws []write) string {
	for _, w := range ws {
		if w.doc.resource != "" {
			return fmt.Sprintf("%s (%s)", k, w.doc.resource)
		}
	}
	return k.String()
}

// incarnations splits a document's writes at its creates.
func incarnations(ws []write) [][]write {
	var out [][]write
	for _, w := range ws {
		if w.kind == writeCreate || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], w)
	}
	return out
}

func checkIncarnation(k string, ws []write) []string {
	var versions []int64
	for _, w := range ws {
		if w.kind != writeDelete {
			versions = append(versions, w.doc.version)
		}
	}
	slices.Sort(versions)
	var problems []string
	if ws[0].kind != writeCreate {
		return append(problems, fmt.Sprintf("%s: written (%s, version %d) with no acknowledged create before it", k, ws[0].kind, ws[0].doc.version))
	}
	for i, v := range versions {
		want := int64(i + 1)
		switch {
		case i > 0 && v == versions[i-1]:
			problems = append(problems, fmt.Sprintf("%s: instanceVersion %d written more than once: a stomped update (%d writes: %v)", k, v, len(versions), versions))
			return problems
		case v != want:
			problems = append(problems, fmt.Sprintf("%s: instanceVersion %d where %d was due: versions written %v", k, v, want, versions))
			return problems
		}
	}
	return problems
}

// checkObserved holds what the change feed showed of one document against
// the acknowledged writes: each version it showed was written, and they
// came in order (incarnation, then instanceVersion).
func checkObserved(k string, seen []docVersion, ws []write) []string {
	type place struct{ incarnation, version int64 }
	acked := map[string]place{}
	for i, inc := range incarnations(ws) {
		for _, w := range inc {
			if w.kind != writeDelete {
				acked[w.doc.etag] = place{int64(i), w.doc.version}
			}
		}
	}
	var problems []string
	var last place
	for i, d := range seen {
		p, ok := acked[d.etag]
		if !ok || p.version != d.version {
			problems = append(problems, fmt.Sprintf("%s: the change feed showed version %d etag %s, which no acknowledged write produced", k, d.version, d.etag))
			continue
		}
		if i > 0 && (p.incarnation < last.incarnation || p.incarnation == last.incarnation && p.version <= last.version) {
			problems = append(problems, fmt.Sprintf("%s: the change feed showed version %d after version %d", k, d.version, last.version))
		}
		last = p
	}
	return problems
}

func compareKeys(a, b docKey) int {
	if a.pk != b.pk {
		if a.pk < b.pk {
			return -1
		}
		return 1
	}
	switch {
	case a.id < b.id:
		return -1
	case a.id > b.id:
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[docKey]V) []docKey {
	keys := make([]docKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}
