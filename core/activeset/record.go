package activeset

import (
	"bytes"
	"encoding/binary"
	"fmt"
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
// would take over 300 MB, and the Go heap's peak is about twice what is
// live. So each document is kept compressed with S2 (klauspost/compress)
// against a dictionary: the first operation, or the first resource, the
// view recorded since it was built — documents of one kind share almost
// all their bytes but ids and times. Measured on the bench's documents:
// 1,550 bytes become 245 (flate with the same dictionary: 206, but 5-7 µs
// to decode against S2's 0.3 µs; zstd: 185, 2.6-10 µs), and a tick decodes
// every document it holds.
//
// A record is one byte slice: a flags byte, _ts, the expiry and the
// instanceVersion as uvarints, the etag with its length, then the S2
// block. Documents are keyed inside their partition by a 128-bit seeded
// hash of their id rather than by the id itself (48 bytes a document
// more): two ids of one partition collide with a chance of about n²/2¹²⁹.

// key names a document inside its partition.
type key [2]uint64

// keyer hashes ids with two seeds of its own.
type keyer struct{ a, b maphash.Seed }

func newKeyer() keyer { return keyer{a: maphash.MakeSeed(), b: maphash.MakeSeed()} }

func (k keyer) of(id string) key {
	return key{maphash.String(k.a, id), maphash.String(k.b, id)}
}

// Record flags.
const (
	flagDict    byte = 1 << iota // the block uses the dictionary
	flagPending                  // an operation that owes only a notification
	flagGone                     // a resource soft-deleted or expired: a header, no document
)

// meta is a record's header.
type meta struct {
	flags   byte
	ts      int64
	expiry  int64 // Unix seconds; 0 never
	version int64
	etag    string
}

func (m meta) expiredAt(now int64) bool { return m.expiry != 0 && m.expiry <= now }

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
	case h.etag == m.etag:
		return false
	case h.ts != m.ts:
		return h.ts > m.ts
	case h.version > 0 && m.version > 0 && h.version != m.version:
		return h.version > m.version
	}
	return true
}

// codec compresses one kind of document (operations, or resources)
// against a dictionary taken from the first document it sees.
type codec struct {
	once sync.Once
	dict *s2.Dict // nil when the first document was too short for one
}

// encode returns the record of body with its header; safe for concurrent use.
func (c *codec) encode(body []byte, h head, flags byte) []byte {
	var block []byte
	switch {
	case flags&flagGone != 0:
	case c.dictFor(body) != nil:
		flags |= flagDict
		block = c.dict.Encode(nil, body)
	default:
		block = s2.Encode(nil, body)
	}
	out := make([]byte, 0, 1+4*binary.MaxVarintLen64+len(h.etag)+len(block))
	out = append(out, flags)
	out = binary.AppendUvarint(out, uint64(h.ts))
	out = binary.AppendUvarint(out, uint64(h.expiry()))
	out = binary.AppendUvarint(out, uint64(max(h.version, 0)))
	out = binary.AppendUvarint(out, uint64(len(h.etag)))
	out = append(out, h.etag...)
	return append(out, block...)
}

func (c *codec) dictFor(body []byte) *s2.Dict {
	c.once.Do(func() { c.dict = s2.MakeDict(bytes.Clone(body), nil) })
	return c.dict
}

// header reads a record's header and returns where its block starts.
func header(rec []byte) (meta, int, error) {
	var m meta
	if len(rec) == 0 {
		return m, 0, fmt.Errorf("empty record")
	}
	m.flags = rec[0]
	i := 1
	var fields [4]uint64
	for f := range fields {
		v, n := binary.Uvarint(rec[i:])
		if n <= 0 {
			return m, 0, fmt.Errorf("record header field %d is damaged", f)
		}
		fields[f], i = v, i+n
	}
	m.ts, m.expiry, m.version = int64(fields[0]), int64(fields[1]), int64(fields[2])
	if n := int(fields[3]); i+n <= len(rec) {
		m.etag, i = string(rec[i:i+n]), i+n
	} else {
		return m, 0, fmt.Errorf("record etag is damaged")
	}
	return m, i, nil
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
	return body, m.etag, nil
}
