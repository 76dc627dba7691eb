package activeset

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/hcpops/hcpops/core/document"
)

// How the view holds a document, and why.
//
// The tick decides from a projection of each document, parsed once when
// the document changes (document.AppendProjection): an operation whole,
// in its typed fields, and of a resource the members a poll reads. A write
// reads the resource whole first (its projection refuses to be written),
// so the view holds what the tick decides on, not every member a write
// must keep. UUIDs in the projection's strings are packed to 16 bytes.
//
// Each projection is kept S2-compressed (klauspost/compress) against a
// dictionary: the first operation's, or the first resource's, projection
// since the view was built, so what documents of a kind share (resource
// ID prefixes, member names, the CS href prefix) costs almost nothing.
// Uncompressed, the projections of a large active set alone would take
// more than #35 allows the tick's whole peak heap; compressed, they leave
// room for the rest. What the compression costs a tick is one S2 block
// decoded per document, into the buffer the document handed out keeps
// (codec.decode): a small share of the unchanged tick's CPU. Figures:
// docs/decisions/active-set-view.md#what-compression-buys.
//
// A record is one byte slice: a flags byte, _ts, the expiry and the
// instanceVersion as uvarints, a CRC-32 of the etag (to tell a copy seen
// twice), for a projection the room its strings take unpacked
// (document.ProjectionRoom, so that one buffer holds both: an allocation
// less per document per tick), then the S2 block. Records live in a slab (slab.go). Documents
// are keyed inside their partition by their id, exactly (key.go).

// Record flags.
const (
	flagDict    byte = 1 << iota // the frame uses the dictionary
	flagPending                  // an operation that owes only a notification
	flagGone                     // a resource soft-deleted or expired: a header, no document
	flagRaw                      // the document as read, not a projection: it did not parse
)

// meta is a record's header.
type meta struct {
	flags   byte
	ts      int64
	expiry  int64 // Unix seconds; 0 never
	version int64
	etag    uint32 // CRC-32 of the etag
	room    int    // of a projection: document.ProjectionRoom
}

// projection says a record holds a projection (not a document, nor none).
func projection(flags byte) bool { return flags&(flagGone|flagRaw) == 0 }

func (m meta) expiredAt(now int64) bool { return m.expiry != 0 && m.expiry <= now }

// replacedBy is newer for two heads: whether o should replace h.
func (h head) replacedBy(o head) bool {
	return meta{ts: h.ts, version: h.version, etag: etagSum(h.etag)}.newer(o)
}

// newer says whether a document with header h should replace one held
// with header m. The feed delivers a document's latest version, but a
// page read again, or one read before a direct read of the same document,
// can come after it. An earlier _ts is older; within one second a lower
// instanceVersion is. _ts comes first because a document deleted and
// created again starts its instanceVersion anew. Versions that cannot be
// told apart go to the incoming copy, which costs at worst a 412 and a
// re-read.
func (m meta) newer(h head) bool {
	switch {
	case etagSum(h.etag) == m.etag:
		return false
	case h.ts != m.ts:
		return h.ts > m.ts
	case h.version > 0 && m.version > 0 && h.version != m.version:
		return h.version > m.version
	}
	return true
}

func etagSum(etag string) uint32 { return crc32.ChecksumIEEE([]byte(etag)) }

// codec compresses one kind of projection (operations', or resources')
// against a dictionary taken from the first it sees.
type codec struct {
	once sync.Once
	dict *s2.Dict // nil when the first was too short for one
	// scratch holds *scratch: a record's projection and S2 block are
	// built in one and only the record is kept. Built in fresh buffers, the
	// two were garbage at every record, and a tick that finds every
	// operation changed records four an operation
	// (docs/decisions/active-set-view.md#building-a-record).
	scratch sync.Pool
}

// scratch is the room a record is built in; nothing kept points into it.
type scratch struct{ proj, block []byte }

// projectionRoom is what a projection is first given to grow in: most
// are under a kilobyte.
const projectionRoom = 1024

// room takes scratch room from the pool; give it back with
// c.scratch.Put once nothing returned points into it. A document too
// large to project makes a large block, which the pool drops at the
// next collections.
func (c *codec) room() *scratch {
	if sc, ok := c.scratch.Get().(*scratch); ok {
		return sc
	}
	return &scratch{proj: make([]byte, 0, projectionRoom)}
}

// project returns the record of the projection appendTo appends to its
// argument (an empty buffer), with its header.
func (c *codec) project(appendTo func([]byte) []byte, h head, flags byte) []byte {
	sc := c.room()
	defer c.scratch.Put(sc)
	sc.proj = appendTo(sc.proj[:0])
	return c.encodeIn(sc, sc.proj, h, flags)
}

func (c *codec) dictFor(first []byte) *s2.Dict {
	// MakeDict keeps the bytes it is given, and first is scratch room.
	c.once.Do(func() { c.dict = s2.MakeDict(slices.Clone(first), nil) })
	return c.dict
}

// encode returns the record of payload (a projection, or with flagRaw a
// document) with its header; safe for concurrent use.
func (c *codec) encode(payload []byte, h head, flags byte) []byte {
	sc := c.room()
	defer c.scratch.Put(sc)
	return c.encodeIn(sc, payload, h, flags)
}

// encodeIn is encode with sc's block as the S2 encoder's room; the record
// returned is a new slice.
func (c *codec) encodeIn(sc *scratch, payload []byte, h head, flags byte) []byte {
	var block []byte
	if flags&flagGone == 0 {
		room := sc.block[:cap(sc.block)]
		if flags&flagRaw != 0 {
			block = s2.Encode(room, payload)
		} else if d := c.dictFor(payload); d != nil {
			flags |= flagDict
			block = d.Encode(room, payload)
		} else {
			block = s2.Encode(room, payload)
		}
		sc.block = block[:0]
	}
	var hdr [1 + 4*binary.MaxVarintLen64 + 4]byte
	out := append(hdr[:0], flags)
	out = binary.AppendUvarint(out, uint64(h.ts))
	out = binary.AppendUvarint(out, uint64(h.expiry()))
	out = binary.AppendUvarint(out, uint64(max(h.version, 0)))
	out = binary.LittleEndian.AppendUint32(out, etagSum(h.etag))
	if projection(flags) {
		out = binary.AppendUvarint(out, uint64(document.ProjectionRoom(payload)))
	}
	rec := make([]byte, 0, len(out)+len(block))
	return append(append(rec, out...), block...)
}

// header reads a record's header and returns where its frame starts.
func header(rec []byte) (meta, int, error) {
	var m meta
	if len(rec) == 0 {
		return m, 0, fmt.Errorf("empty record")
	}
	m.flags = rec[0]
	i := 1
	var fields [3]uint64
	for f := range fields {
		v, n := binary.Uvarint(rec[i:])
		if n <= 0 {
			return m, 0, fmt.Errorf("record header field %d is damaged", f)
		}
		fields[f], i = v, i+n
	}
	if i+4 > len(rec) {
		return m, 0, fmt.Errorf("record header is short")
	}
	m.ts, m.expiry, m.version = int64(fields[0]), int64(fields[1]), int64(fields[2])
	m.etag = binary.LittleEndian.Uint32(rec[i:])
	i += 4
	if projection(m.flags) {
		v, n := binary.Uvarint(rec[i:])
		if n <= 0 || v > 1<<24 {
			return m, 0, fmt.Errorf("record header's room is damaged")
		}
		m.room, i = int(v), i+n
	}
	return m, i, nil
}

// decode returns what a record holds, in dst's room when it is enough,
// and its flags. A projection comes back with its room (meta.room) as
// spare capacity, where its reader writes its packed strings out.
func (c *codec) decode(dst, rec []byte) ([]byte, byte, error) {
	m, start, err := header(rec)
	if err != nil {
		return nil, 0, err
	}
	if m.room > 0 {
		n, err := s2.DecodedLen(rec[start:])
		if err != nil {
			return nil, 0, fmt.Errorf("decoding a held document: %w", err)
		}
		if cap(dst) < n+m.room {
			dst = make([]byte, 0, n+m.room)
		}
	}
	var payload []byte
	if m.flags&flagDict != 0 {
		payload, err = c.dict.Decode(dst[:cap(dst)], rec[start:])
	} else {
		payload, err = s2.Decode(dst[:cap(dst)], rec[start:])
	}
	if err != nil {
		return nil, 0, fmt.Errorf("decoding a held document: %w", err)
	}
	return payload, m.flags, nil
}
