package activeset

import (
	"bytes"
	"encoding/binary"
	"encoding/json/jsontext"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"sync"

	"github.com/klauspost/compress/s2"
)

// How the view holds a document, and why.
//
// A tick needs every active operation's document and its resource's, whole:
// its writes are read-modify-writes that keep every member hcpops does not
// model, so a summary would not do. Held as they come (about 1.5 KB each
// as the frontend writes them, 5 KB for a full cluster), 100,000 operations
// would take over 300 MB, and the Go heap's peak is more than twice what
// is live. So each document is kept compressed, in two steps:
//
//   - every lower-case UUID in it (ids, subscriptions, etags: most of what
//     tells one document from another) is written as a marker byte and its
//     16 bytes (uuid.go), which JSON text never holds raw;
//   - S2 (klauspost/compress) compresses the rest against a dictionary: the
//     first operation, or the first resource, the view recorded since it
//     was built, so what documents of a kind share costs almost nothing.
//
// Measured on the bench's documents (1,550 bytes each): 194 bytes a
// document, 4 µs to encode (when it changes) and 2.4 µs to hand out again
// (every tick: S2, the UUIDs written out, the etag read). S2 alone makes
// 245 bytes (0.3 µs to decode), zstd with the same dictionary 185 (2.7 µs
// to decode alone, 10 µs to encode, and 16 MB of coder state), flate 206
// (5-7 µs). At 100,000 operations S2 alone put the peak heap of a tick at
// 229 MB.
//
// A record is one byte slice: a flags byte, _ts, the expiry and the
// instanceVersion as uvarints, a CRC-32 of the etag (to tell a copy seen
// twice), then the S2 block. The etag itself is in the document. Records
// live in a slab (slab.go). Documents are keyed inside their partition by
// a 64-bit seeded hash of their id rather than by the id itself (48 bytes
// a document more): two of a partition's n ids collide with a chance of
// about n²/2⁶⁵, one in 10¹³ for a subscription with 10,000 documents.

// key names a document inside its partition.
type key uint64

// keyer hashes ids with a seed of its own.
type keyer struct{ seed maphash.Seed }

func newKeyer() keyer { return keyer{seed: maphash.MakeSeed()} }

func (k keyer) of(id string) key { return key(maphash.String(k.seed, id)) }

// Record flags.
const (
	flagDict    byte = 1 << iota // the frame uses the dictionary
	flagPending                  // an operation that owes only a notification
	flagGone                     // a resource soft-deleted or expired: a header, no document
	flagUUIDs                    // UUIDs are packed (uuid.go)
)

// meta is a record's header.
type meta struct {
	flags   byte
	ts      int64
	expiry  int64 // Unix seconds; 0 never
	version int64
	etag    uint32 // CRC-32 of the etag
}

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

// codec compresses one kind of document (operations, or resources)
// against a dictionary taken from the first document it sees.
type codec struct {
	once sync.Once
	dict *s2.Dict // nil when the first document was too short for one
}

func (c *codec) dictFor(first []byte) *s2.Dict {
	c.once.Do(func() { c.dict = s2.MakeDict(packUUIDs(nil, first), nil) })
	return c.dict
}

// encode returns the record of body with its header; safe for concurrent use.
func (c *codec) encode(body []byte, h head, flags byte) []byte {
	var block []byte
	if flags&flagGone == 0 {
		packed := body
		if canPack(body) {
			flags |= flagUUIDs
			packed = packUUIDs(make([]byte, 0, len(body)), body)
		}
		if d := c.dictFor(body); d != nil {
			flags |= flagDict
			block = d.Encode(nil, packed)
		} else {
			block = s2.Encode(nil, packed)
		}
	}
	var hdr [1 + 3*binary.MaxVarintLen64 + 4]byte
	out := append(hdr[:0], flags)
	out = binary.AppendUvarint(out, uint64(h.ts))
	out = binary.AppendUvarint(out, uint64(h.expiry()))
	out = binary.AppendUvarint(out, uint64(max(h.version, 0)))
	out = binary.LittleEndian.AppendUint32(out, etagSum(h.etag))
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
	return m, i + 4, nil
}

// decode returns the document a record holds, and its etag.
func (c *codec) decode(rec []byte) ([]byte, string, error) {
	m, start, err := header(rec)
	if err != nil {
		return nil, "", err
	}
	var body []byte
	if m.flags&flagDict != 0 {
		body, err = c.dict.Decode(nil, rec[start:])
	} else {
		body, err = s2.Decode(nil, rec[start:])
	}
	if err != nil {
		return nil, "", fmt.Errorf("decoding a held document: %w", err)
	}
	if m.flags&flagUUIDs != 0 {
		if body, err = unpackUUIDs(body); err != nil {
			return nil, "", err
		}
	}
	return body, etagOf(body), nil
}

// etagOf reads the top-level _etag of a document the stores wrote: they
// put their system members last, so it is the last member of that name.
func etagOf(body []byte) string {
	i := bytes.LastIndex(body, []byte(`"_etag":`))
	if i < 0 {
		return ""
	}
	v := body[i+len(`"_etag":`):]
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	end := 1
	for end < len(v) && v[end] != '"' {
		if v[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(v) {
		return ""
	}
	u, err := jsontext.AppendUnquote(nil, v[:end+1])
	if err != nil {
		return ""
	}
	return string(u)
}
