package document

import (
	"encoding/json"
	"slices"
)

// marshalTree renders a decoded document as encoding/json renders it
// (members sorted by key, strings escaped its way, numbers as their
// literal text) without its reflection, which was most of the cost of a
// resource write. Anything it does not render itself (a value of another
// type, a number that is not valid JSON) goes to encoding/json whole.
// size, if known, is about how long the rendering will be.
func marshalTree(t tree, size int) ([]byte, error) {
	var w objectWriter
	w.buf.Grow(size)
	if w.value(t) {
		return w.buf.Bytes(), nil
	}
	return json.Marshal(t)
}

// value writes v; false if it is not a value marshalTree renders.
func (w *objectWriter) value(v any) bool {
	switch x := v.(type) {
	case nil:
		w.buf.WriteString("null")
	case string:
		w.string(x)
	case bool:
		if x {
			w.buf.WriteString("true")
		} else {
			w.buf.WriteString("false")
		}
	case json.Number:
		if !validNumber(string(x)) {
			return false // encoding/json writes "" as 0 and refuses the rest
		}
		w.buf.WriteString(string(x))
	case tree:
		if x == nil {
			w.buf.WriteString("null")
			return true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.string(k)
			w.buf.WriteByte(':')
			if !w.value(x[k]) {
				return false
			}
		}
		w.buf.WriteByte('}')
	case []any:
		if x == nil {
			w.buf.WriteString("null")
			return true
		}
		w.buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if !w.value(e) {
				return false
			}
		}
		w.buf.WriteByte(']')
	default:
		return false
	}
	return true
}

// validNumber reports whether s is a JSON number, nothing around it.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	sc := scanner[string]{b: s}
	return sc.number() && sc.i == len(s)
}
