package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// members are the members of a JSON object a typed decoder does not know,
// as raw JSON, carried through a rewrite untouched.
type members map[string]json.RawMessage

// objectMembers hands each member of raw, a JSON object, to each. The
// values are slices of raw: copy what outlives it. Bad input gets
// encoding/json's own error, so messages read as they always have; each
// may have seen members by then.
func objectMembers[T text](what string, raw T, each func(rawMember[T])) error {
	if scanObject(raw, each) {
		return nil
	}
	var m members // its type name is in encoding/json's message
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return fmt.Errorf("%s: not a JSON object: %w", what, err)
	}
	if m == nil {
		return fmt.Errorf("%s: is null, want a JSON object", what)
	}
	// Unreachable while the scanner and encoding/json agree (fuzzed).
	return fmt.Errorf("%s: not a JSON object", what)
}

// knownKeys indexes the member names a typed decoder takes; each is built
// once and never changed.
type knownKeys map[string]int

func keysOf(names ...string) knownKeys {
	k := make(knownKeys, len(names))
	for i, n := range names {
		k[n] = i
	}
	return k
}

// file files a scanned member: the value of a known key into vals at its
// index (so the last of a repeated key wins), any other member into rest,
// copied (rest is made on first use). Known keys match without allocating.
func file[T text](k knownKeys, m rawMember[T], vals []T, rest *members) {
	body := m.key[1 : len(m.key)-1]
	i, ok := k[string(body)]
	name := ""
	if escaped(body) || !ok && !utf8.ValidString(string(body)) {
		name = m.name() // escaped or repaired: match what it decodes to
		i, ok = k[name]
	}
	if ok {
		vals[i] = m.val
		return
	}
	if name == "" {
		name = string(body)
	}
	if *rest == nil {
		*rest = members{}
	}
	(*rest)[name] = json.RawMessage(m.val) // a copy, whatever T is
}

// takeValue is take for a value filed by split: nil (missing) or null
// leaves v as it was.
func takeValue[T text](prefix, key string, raw T, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
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
func decodeValue[T text](raw T, v any) error {
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
		if decodeCosmosMetadata(dst, raw) {
			return nil
		}
	case *json.Number:
		if c := raw[0]; c == '-' || (c >= '0' && c <= '9') {
			*dst = json.Number(string(raw))
			return nil
		}
	case *time.Time:
		// encoding/json hands a time the value's bytes as they are.
		return dst.UnmarshalJSON([]byte(raw))
	case **time.Time:
		t := new(time.Time)
		if err := t.UnmarshalJSON([]byte(raw)); err != nil {
			return err
		}
		*dst = t
		return nil
	}
	return json.Unmarshal([]byte(raw), v)
}

// clip shortens a raw value for an error message.
func clip[T text](raw T) string {
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
	w.string(k)
	w.buf.WriteByte(':')
}

// string writes s as encoding/json does: directly when no byte needs
// escaping (encoding/json escapes quotes, backslashes, control characters,
// <, > and &, and repairs invalid UTF-8), through it otherwise.
func (w *objectWriter) string(s string) {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			w.buf.Write(b)
			return
		}
	}
	w.buf.WriteByte('"')
	w.buf.WriteString(s)
	w.buf.WriteByte('"')
}

// putString, putBool, putInt and putTime write what put would, without
// encoding/json's reflection: a document write puts some twenty of them.
func (w *objectWriter) putString(k, s string) {
	if w.err != nil {
		return
	}
	w.key(k)
	w.string(s)
}

func (w *objectWriter) putBool(k string, b bool) {
	if w.err != nil {
		return
	}
	w.key(k)
	w.buf.WriteString(strconv.FormatBool(b))
}

func (w *objectWriter) putInt(k string, n int64) {
	if w.err != nil {
		return
	}
	w.key(k)
	w.buf.Write(strconv.AppendInt(w.buf.AvailableBuffer(), n, 10))
}

func (w *objectWriter) putTime(k string, t time.Time) {
	if w.err != nil {
		return
	}
	b, err := t.MarshalJSON() // what encoding/json calls, already compact
	if err != nil {
		w.err = fmt.Errorf("%s: %w", k, err)
		return
	}
	w.key(k)
	w.buf.Write(b)
}

// putObject writes k with an object another objectWriter rendered, which
// is compact already.
func (w *objectWriter) putObject(k string, o *objectWriter) {
	b, err := o.bytes()
	if err != nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
	if w.err != nil {
		return
	}
	w.key(k)
	w.buf.Write(b)
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
