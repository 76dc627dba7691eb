package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// members is a decoded JSON object, member by member, as raw JSON. Typed
// decoders take the members they know out of it; what is left is carried
// through a rewrite untouched.
type members map[string]json.RawMessage

// decodeObject decodes raw as a JSON object. what names it for the error.
func decodeObject(what string, raw []byte) (members, error) {
	var m members
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", what, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: is null, want a JSON object", what)
	}
	return m, nil
}

// take decodes member key into v and removes it; a missing or null member
// leaves v as it was. field is the member's full path, for the error.
func (m members) take(key, field string, v any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	if string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %s cannot be decoded: %w", field, clip(raw), err)
	}
	return nil
}

// clip shortens a raw value for an error message.
func clip(raw []byte) string {
	const max = 80
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}

// objectWriter renders a JSON object with members in the order they are
// put, so documents come out in ARO-HCP's marshal order.
type objectWriter struct {
	buf bytes.Buffer
	n   int
	err error
}

func (w *objectWriter) key(k string) {
	if w.n == 0 {
		w.buf.WriteByte('{')
	} else {
		w.buf.WriteByte(',')
	}
	w.n++
	kb, _ := json.Marshal(k) // a string always marshals
	w.buf.Write(kb)
	w.buf.WriteByte(':')
}

// put writes k with v marshalled by encoding/json.
func (w *objectWriter) put(k string, v any) {
	if w.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.err = fmt.Errorf("%s: %w", k, err)
		return
	}
	w.key(k)
	w.buf.Write(b)
}

// putRaw writes k with an already encoded value.
func (w *objectWriter) putRaw(k string, raw json.RawMessage) {
	if w.err != nil {
		return
	}
	w.key(k)
	if err := json.Compact(&w.buf, raw); err != nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
}

// rest writes the members nobody took, sorted by key so output is stable.
func (w *objectWriter) rest(m members) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.putRaw(k, m[k])
	}
}

func (w *objectWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.n == 0 {
		return []byte("{}"), nil
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

// clone copies the map (raw values are never mutated in place, so sharing
// them is safe).
func (m members) clone() members {
	if m == nil {
		return nil
	}
	c := make(members, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
