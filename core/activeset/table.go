package activeset

import "slices"

// table is a partition's entries of one kind, sorted by key. A sorted
// slice costs an entry its size and a little slack, where a map costs
// more (its load factor, groups and control bytes; see
// docs/decisions/active-set-view.md#sorted-tables). A change costs a
// binary search and a move of the entries after it, small next to
// encoding its document. A full read adds every entry at once, which
// would move the entries quadratically in a large partition: while a
// table is being built, entries are appended and found through an index,
// and seal sorts them once.
type table[E keyed] struct {
	entries []E
	index   map[key]int // while building
}

type keyed interface{ entryKey() key }

func (t *table[E]) len() int { return len(t.entries) }

func (t *table[E]) find(k key) (int, bool) {
	if t.index != nil {
		i, ok := t.index[k]
		return i, ok
	}
	// The search is written out per kind of entry: through E's entryKey
	// every step was a call through the instantiation's dictionary and a
	// copy of the entry, which made a tick's lookup several times slower
	// (BenchmarkTableFind; docs/decisions/active-set-view.md#sorted-tables).
	switch t := any(t).(type) {
	case *table[resEntry]:
		return searchRes(t.entries, k)
	case *table[opEntry]:
		return searchOps(t.entries, k)
	}
	return slices.BinarySearchFunc(t.entries, k, func(e E, k key) int { return compareKeys(e.entryKey(), k) })
}

func searchRes(es []resEntry, k key) (int, bool) {
	i, j := 0, len(es)
	for i < j {
		if h := int(uint(i+j) >> 1); keyLess(&es[h].k, &k) {
			i = h + 1
		} else {
			j = h
		}
	}
	return i, i < len(es) && es[i].k == k
}

func searchOps(es []opEntry, k key) (int, bool) {
	i, j := 0, len(es)
	for i < j {
		if h := int(uint(i+j) >> 1); keyLess(&es[h].k, &k) {
			i = h + 1
		} else {
			j = h
		}
	}
	return i, i < len(es) && es[i].k == k
}

func (t *table[E]) get(k key) (E, bool) {
	if i, ok := t.find(k); ok {
		return t.entries[i], true
	}
	var zero E
	return zero, false
}

// put adds e, or replaces the entry of its key.
func (t *table[E]) put(e E) {
	i, ok := t.find(e.entryKey())
	switch {
	case ok:
		t.entries[i] = e
	case t.index != nil:
		t.index[e.entryKey()] = len(t.entries)
		t.entries = append(t.entries, e)
	default:
		t.entries = slices.Insert(t.entries, i, e)
	}
}

// del removes k's entry, and gives memory back once most of it is unused.
func (t *table[E]) del(k key) {
	i, ok := t.find(k)
	if !ok {
		return
	}
	if t.index != nil {
		last := len(t.entries) - 1
		t.entries[i] = t.entries[last]
		t.index[t.entries[i].entryKey()] = i
		t.entries = t.entries[:last]
		delete(t.index, k)
		return
	}
	t.entries = slices.Delete(t.entries, i, i+1)
	if cap(t.entries) > 64 && len(t.entries) < cap(t.entries)/4 {
		t.entries = slices.Clone(t.entries)
	}
}

// building starts a table that is sealed later.
func (t *table[E]) building() { t.index = map[key]int{} }

// seal sorts a table built by appending and drops its index.
func (t *table[E]) seal() {
	if t.index == nil {
		return
	}
	slices.SortFunc(t.entries, func(a, b E) int { return compareKeys(a.entryKey(), b.entryKey()) })
	t.entries = slices.Clone(t.entries) // appending left up to twice the room; Clip would keep it
	t.index = nil
}
