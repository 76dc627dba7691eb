package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// members is a decoded JSON object, member by member, as raw JSON. Typed
// decoders take the members they know out of it; what is left is carried
// through a rewrite untouched.
type members map[string]json.RawMessage

// decodeObject decodes raw as a JSON object. what names it for the error.
func decodeObject(what string, raw []byte) (members, error) {
	ms, err := scanMembers(what, raw)
	if err != nil {
		return nil, err
	}
	m := make(members, len(ms))
	for _, e := range ms {
		m[e.name()] = e.val // a repeated key: the last one wins
	}
	return m, nil
}

// scanMembers lists the members of raw, a JSON object. The values are
// slices of raw: detach what outlives it. Bad input gets encoding/json's
// own error, so messages read as they always have.
func scanMembers(what string, raw []byte) ([]rawMember, error) {
	// Documents have some twenty members a level; one allocation holds them.
	if ms, ok := scanObject(raw, make([]rawMember, 0, 24)); ok {
		return ms, nil
	}
	var m members // its type name is in encoding/json's message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", what, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: is null, want a JSON object", what)
	}
	// Unreachable while the scanner and encoding/json agree (fuzzed).
	return nil, fmt.Errorf("%s: not a JSON object", what)
}

// detach copies the values, so the members no longer share the bytes they
// were scanned from.
func (m members) detach() members {
	for k, v := range m {
		m[k] = bytes.Clone(v)
	}
	return m
}

// take decodes member key into v and removes it; a missing or null member
// leaves v as it was. prefix+key is the member's full path, for the error.
func (m members) take(prefix, key string, v any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	if string(raw) == "null" {
		return nil
	}
	if err := decodeValue(raw, v); err != nil {
		return fmt.Errorf("%s%s: %s cannot be decoded: %w", prefix, key, clip(raw), err)
	}
	return nil
}

// decodeValue is json.Unmarshal(raw, v) for a value the scanner has
// validated, done directly for the shapes documents hold and by
// encoding/json for everything else (and for every error).
func decodeValue(raw []byte, v any) error {
	switch dst := v.(type) {
	case *string:
		if raw[0] == '"' {
			*dst = unquote(raw)
			return nil
		}
	case *bool:
		switch string(raw) {
		case "true":
			*dst = true
			return nil
		case "false":
			*dst = false
			return nil
		}
	case *int:
		if n, err := strconv.ParseInt(string(raw), 10, strconv.IntSize); err == nil {
			*dst = int(n)
			return nil
		}
	case *int64:
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			*dst = n
			return nil
		}
	case *CosmosMetadata:
		if dst.decodeExact(raw) {
			return nil
		}
	case *json.Number:
		if c := raw[0]; c == '-' || (c >= '0' && c <= '9') {
			*dst = json.Number(raw)
			return nil
		}
	case *time.Time:
		// encoding/json hands a time the value's bytes as they are.
		return dst.UnmarshalJSON(raw)
	case **time.Time:
		t := new(time.Time)
		if err := t.UnmarshalJSON(raw); err != nil {
			return err
		}
		*dst = t
		return nil
	}
	return json.Unmarshal(raw, v)
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
