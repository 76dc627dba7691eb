package document

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Projections: what a poll reads of a document, encoded compactly so that
// the poll's view of the active set (package activeset) can hold it for
// many ticks and hand it out again without parsing JSON.
//
// An operation's projection is the whole OperationDocument (its modelled
// fields and the raw members it does not model), so the operation it
// gives back renders, and writes, exactly as ParseOperation's would.
//
// A resource's projection is its head: the members the accessors read
// (the schema). The Resource it gives back answers every accessor as the
// parsed document would, but holds no more of the document: Partial says
// so, and a write must read the document whole first (ParseResource), as
// MarshalReplace insists. That keeps what the view holds at the size of
// what the tick decides on, not of the documents.

var errProjection = errors.New("damaged projection")

// Value tags of the projection's encoding.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagString
	tagNumber
	tagArray
	tagObject
)

type projWriter struct {
	b       []byte
	scratch []byte
	// unpacked is the length, written out, of the strings whose UUIDs
	// were packed: what a reader needs room for (see end).
	unpacked int
}

// end appends the room the projection's packed strings take unpacked, as
// its last four bytes, so that a reader allocates exactly that once (a
// guess from the rest's length allocated more than that, every operation
// of every tick: docs/decisions/active-set-view.md#a-projections-room).
func (w *projWriter) end() []byte {
	return binary.LittleEndian.AppendUint32(w.b, uint32(w.unpacked))
}

func (w *projWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *projWriter) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }

// str writes s, its UUIDs packed when that makes it shorter: the low bit
// of its length says which.
func (w *projWriter) str(s string) {
	if len(s) >= uuidLen && strings.IndexByte(s, '-') >= 8 && canPack(s) {
		if w.scratch = packUUIDs(w.scratch[:0], s); len(w.scratch) < len(s) {
			w.unpacked += len(s)
			w.uvarint(uint64(len(w.scratch))<<1 | 1)
			w.b = append(w.b, w.scratch...)
			return
		}
	}
	w.uvarint(uint64(len(s)) << 1)
	w.b = append(w.b, s...)
}

func (w *projWriter) time(t time.Time) {
	b, err := t.AppendBinary(w.scratch[:0])
	if err != nil { // a zone offset that is not a whole minute: keep it as text
		b = t.AppendFormat(w.scratch[:0], time.RFC3339Nano)
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
	w.scratch = b
	w.uvarint(uint64(len(b)))
	w.b = append(w.b, b...)
}

func (w *projWriter) bool(v bool) {
	if v {
		w.b = append(w.b, tagTrue)
	} else {
		w.b = append(w.b, tagFalse)
	}
}

// value writes a tree value (what readAny decodes).
func (w *projWriter) value(v any) {
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, tagNull)
	case bool:
		w.bool(v)
	case string:
		w.b = append(w.b, tagString)
		w.str(v)
	case json.Number:
		w.b = append(w.b, tagNumber)
		w.str(string(v))
	case []any:
		w.b = append(w.b, tagArray)
		w.uvarint(uint64(len(v)))
		for _, e := range v {
			w.value(e)
		}
	case tree:
		w.b = append(w.b, tagObject)
		w.uvarint(uint64(len(v)))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.str(k)
			w.value(v[k])
		}
	default: // a float64 or other Go value a setter may have put: as JSON text
		raw, _ := json.Marshal(v)
		w.b = append(w.b, tagNumber)
		w.str(string(raw))
	}
}

type projReader struct {
	text string // the whole projection; strings read are substrings of it
	i    int
	err  error
	room int // what its packed strings take unpacked; 0: unknown
	// spare is room past an owned projection's end that out may use.
	spare []byte
	// out holds the strings whose UUIDs were packed, written out again.
	// A string handed out keeps the bytes it was written to, which out only
	// ever appends past (growing moves what follows to a new array).
	out []byte
}

func newProjReader(b []byte) *projReader { return &projReader{text: string(b)} }

// ownedProjReader reads b without copying it: the strings it hands out
// are b's bytes, so b must never change after. A tick decodes every held
// projection into a buffer of its own; copying it again into a string
// cost an allocation and a memmove per operation per tick (see
// docs/decisions/active-set-view.md#a-projections-room). b's capacity
// past its length, when it holds ProjectionRoom, is where the packed
// strings are written out.
func ownedProjReader(b []byte) *projReader {
	if len(b) == 0 {
		return &projReader{}
	}
	return &projReader{text: unsafe.String(&b[0], len(b)), spare: b[len(b):]}
}

// ProjectionRoom is what a projection's packed strings take written out:
// a buffer with that much capacity past the projection saves its reader
// an allocation.
func ProjectionRoom(p []byte) int {
	if len(p) < 4 {
		return 0
	}
	return int(binary.LittleEndian.Uint32(p[len(p)-4:]))
}

// ended takes the room end wrote off the end of the projection.
func (r *projReader) ended() *projReader {
	n := len(r.text) - 4
	if n < 0 {
		r.fail()
		return r
	}
	room := int(binary.LittleEndian.Uint32([]byte(r.text[n:])))
	if room > 3*n { // 17 bytes unpack to 36: more is no projection of ours
		r.fail()
		room = 0
	}
	r.text, r.room = r.text[:n], room
	if room > 0 && cap(r.spare) >= room {
		r.out = r.spare[:0:room]
	}
	r.spare = nil
	return r
}

func (r *projReader) fail() {
	if r.err == nil {
		r.err = errProjection
	}
}

func (r *projReader) uvarint() uint64 {
	v, n := binary.Uvarint([]byte(r.text[r.i:min(len(r.text), r.i+binary.MaxVarintLen64)]))
	if n <= 0 {
		r.fail()
		return 0
	}
	r.i += n
	return v
}

// varint reads what binary.AppendVarint wrote: a zig-zag uvarint.
func (r *projReader) varint() int64 {
	u := r.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (r *projReader) byte() byte {
	if r.i >= len(r.text) {
		r.fail()
		return 0
	}
	r.i++
	return r.text[r.i-1]
}

func (r *projReader) str() string {
	n := r.uvarint()
	packed := n&1 != 0
	s := r.raw(n >> 1)
	if !packed || r.err != nil {
		return s
	}
	// At the first packed string, room for what is left of the
	// projection unpacked (each packed UUID grows by 19 bytes): it holds
	// every packed string still to come, so a projection costs one
	// allocation for all of them, sized to it, not to the worst case of
	// every byte a packed UUID.
	switch {
	case cap(r.out) > 0:
	case r.room > 0:
		r.out = make([]byte, 0, r.room)
	default:
		rest := r.text[r.i-len(s):]
		r.out = make([]byte, 0, len(rest)+(uuidLen-17)*strings.Count(rest, string(rune(uuidMark))))
	}
	start := len(r.out)
	out, err := appendUnpacked(r.out, s)
	if err != nil {
		r.fail()
		return ""
	}
	r.out = out
	if len(out) == start {
		return ""
	}
	return unsafe.String(&out[start], len(out)-start)
}

// raw reads n bytes as they are.
func (r *projReader) raw(n uint64) string {
	if r.err != nil || n > uint64(len(r.text)-r.i) {
		r.fail()
		return ""
	}
	s := r.text[r.i : r.i+int(n)]
	r.i += int(n)
	return s
}

func (r *projReader) time() time.Time {
	text := r.byte() == 1
	s := r.raw(r.uvarint())
	var t time.Time
	var err error
	if text {
		t, err = time.Parse(time.RFC3339Nano, s)
	} else {
		err = t.UnmarshalBinary([]byte(s))
	}
	if err != nil {
		r.fail()
	}
	return t
}

func (r *projReader) value(depth int) any {
	if depth > 64 {
		r.fail()
		return nil
	}
	switch r.byte() {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagString:
		return r.str()
	case tagNumber:
		return json.Number(r.str())
	case tagArray:
		n := r.uvarint()
		if n > uint64(len(r.text)) {
			r.fail()
			return nil
		}
		a := make([]any, 0, n)
		for range n {
			a = append(a, r.value(depth+1))
		}
		return a
	case tagObject:
		n := r.uvarint()
		if n > uint64(len(r.text)) {
			r.fail()
			return nil
		}
		t := make(tree, n)
		for range n {
			k := r.str()
			t[k] = r.value(depth + 1)
		}
		return t
	}
	r.fail()
	return nil
}
