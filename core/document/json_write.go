package document

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"fmt"
	"slices"
	"strings"
	"time"
)

// writer renders a JSON object with encoding/json/jsontext, members in the
// order they are put, so documents come out in ARO-HCP's marshal order.
// Raw values (the members nobody took) are written as they came, only
// compacted, as json.Compact does; strings are escaped as encoding/json
// escapes them, which is how ARO-HCP writes.
type writer struct {
	buf bytes.Buffer
	enc *jsontext.Encoder
	err error
}

// newWriter starts an object; size is about how long it will be.
func newWriter(size int) *writer {
	w := &writer{}
	w.buf.Grow(headroom(size))
	w.enc = jsontext.NewEncoder(&w.buf,
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), jsontext.PreserveRawStrings(true))
	w.token(jsontext.BeginObject)
	return w
}

func (w *writer) token(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

func (w *writer) value(v jsontext.Value) {
	if w.err == nil {
		w.err = w.enc.WriteValue(v)
	}
}

// string writes s as encoding/json does. The encoder is not told to
// escape <, > and & (nor U+2028 and U+2029), as it would then escape them
// in raw values too, which json.Compact leaves alone; strings holding them
// go through encoding/json instead.
func (w *writer) string(s string) {
	if !strings.ContainsAny(s, "<>&") && strings.IndexByte(s, "\u2028"[0]) < 0 { // U+2028 and U+2029 start with 0xE2
		w.token(jsontext.String(s))
		return
	}
	b, _ := json.Marshal(s) // a string always marshals
	w.value(b)
}

func (w *writer) putString(k, s string) {
	w.string(k)
	w.string(s)
}

func (w *writer) putBool(k string, b bool) {
	w.string(k)
	w.token(jsontext.Bool(b))
}

func (w *writer) putInt(k string, n int64) {
	w.string(k)
	w.token(jsontext.Int(n))
}

func (w *writer) putTime(k string, t time.Time) {
	b, err := t.MarshalJSON() // what encoding/json calls
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
	w.string(k)
	w.value(b)
}

// put writes k with v marshalled by encoding/json.
func (w *writer) put(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
	w.string(k)
	w.value(b)
}

// begin opens an object member k; end closes it.
func (w *writer) begin(k string) {
	w.string(k)
	w.token(jsontext.BeginObject)
}

func (w *writer) end() { w.token(jsontext.EndObject) }

// rest writes the members nobody took, sorted by name so output is stable.
func (w *writer) rest(m members) {
	for _, k := range sortedKeys(m) {
		w.string(k)
		if err := w.enc.WriteValue(m[k]); err != nil && w.err == nil {
			w.err = fmt.Errorf("%s: %w", k, err)
		}
	}
}

// bytes closes the object and returns the rendering.
func (w *writer) bytes() ([]byte, error) {
	w.end()
	if w.err != nil {
		return nil, w.err
	}
	return bytes.TrimSuffix(w.buf.Bytes(), []byte("\n")), nil
}

// sortedKeys are m's keys in order (slices.Sorted(maps.Keys(m)) grows its
// slice as it goes).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// headroom is the capacity to give a buffer for a rendering of about size
// bytes: a jsontext.Encoder grows its bytes.Buffer, with a copy, unless a
// quarter of what it has written is still free at the end.
func headroom(size int) int { return size + size/3 + 64 }
