package activeset

// slab holds the view's records back to back in large chunks. A record
// then costs its bytes and a 12-byte place, not an allocation of its own
// (rounded up to a size class) and a slice header; and the view holds no
// pointer per document for the garbage collector to follow, which a
// tick's allocations keep busy. A record per allocation cost more memory
// an operation and a higher peak heap (see
// docs/decisions/active-set-view.md#records-in-a-slab, and record.go for
// the rest).
//
// Chunks are only ever appended to, so a record handed out stays valid
// after it is freed or the slab is compacted: readers decode outside the
// view's lock.
type slab struct {
	chunks [][]byte
	live   int64 // bytes of records in use
	dead   int64 // bytes of freed records still in chunks
	chunk  int   // chunk size; 0 is chunkSize (tests make it small)
}

// loc is a record's place; the zero loc is no record.
type loc struct{ chunk, off, n uint32 }

// chunkSize is how much a chunk holds; a record longer than that gets a
// chunk of its own.
const chunkSize = 1 << 20

func (s *slab) put(rec []byte) loc {
	if len(rec) == 0 {
		return loc{}
	}
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(rec) > cap(s.chunks[last]) {
		s.chunks = append(s.chunks, make([]byte, 0, max(s.size(), len(rec))))
		last++
	}
	c := s.chunks[last]
	l := loc{chunk: uint32(last), off: uint32(len(c)), n: uint32(len(rec))}
	s.chunks[last] = append(c, rec...)
	s.live += int64(len(rec))
	return l
}

// get is the record at l, nil for the zero loc. Its bytes never change.
func (s *slab) get(l loc) []byte {
	if l.n == 0 {
		return nil
	}
	return s.chunks[l.chunk][l.off : l.off+l.n : l.off+l.n]
}

func (s *slab) free(l loc) {
	s.live -= int64(l.n)
	s.dead += int64(l.n)
}

func (s *slab) size() int {
	if s.chunk > 0 {
		return s.chunk
	}
	return chunkSize
}

// wasteful says a compaction would pay: a quarter of what the chunks hold
// is freed records (and at least a chunk's worth).
func (s *slab) wasteful() bool { return s.dead > int64(s.size()) && s.dead*4 > s.live }
