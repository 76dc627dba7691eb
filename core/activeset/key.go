package activeset

import (
	"cmp"
	"encoding/binary"

	"github.com/hcpops/hcpops/core/document"
)

// key names a document inside its partition, exactly: the id's 16 bytes
// when it is a lower-case canonical UUID (every id ARO-HCP and hcpops
// write: operation names and CosmosIDs), else (other) a number the set
// gave that id. Keys hold no pointer, so the tables holding them cost the
// garbage collector nothing to scan.
type key struct {
	u     [16]byte
	other bool
}

// compareKeys orders keys: UUIDs before numbered ids, each by its bytes
// (as two big-endian words, which bytes.Compare's call cost a search's
// every step).
func compareKeys(a, b key) int {
	if a.other != b.other {
		if a.other {
			return 1
		}
		return -1
	}
	x, y := binary.BigEndian.Uint64(a.u[:8]), binary.BigEndian.Uint64(b.u[:8])
	if x == y {
		x, y = binary.BigEndian.Uint64(a.u[8:]), binary.BigEndian.Uint64(b.u[8:])
	}
	return cmp.Compare(x, y)
}

// keyLess is compareKeys(*a, *b) < 0, small enough to inline in a search.
func keyLess(a, b *key) bool {
	if a.other != b.other {
		return b.other
	}
	x, y := binary.BigEndian.Uint64(a.u[:8]), binary.BigEndian.Uint64(b.u[:8])
	if x != y {
		return x < y
	}
	return binary.BigEndian.Uint64(a.u[8:]) < binary.BigEndian.Uint64(b.u[8:])
}

// others numbers the ids that are no UUID, for as long as the set lives
// (a relist builds a new one).
type others map[string]uint64

// lookup is id's key; false for an id that is no UUID and was never
// numbered, which nothing held can have.
func (o others) lookup(id string) (key, bool) {
	var k key
	if document.UUIDBytes(id, &k.u) {
		return k, true
	}
	n, ok := o[id]
	return numbered(n), ok
}

// of is id's key, numbering it if it needs a number.
func (o others) of(id string) key {
	if k, ok := o.lookup(id); ok {
		return k
	}
	n := uint64(len(o)) + 1
	o[id] = n
	return numbered(n)
}

func numbered(n uint64) key {
	k := key{other: true}
	for i := range 8 {
		k.u[i] = byte(n >> (8 * i))
	}
	return k
}
