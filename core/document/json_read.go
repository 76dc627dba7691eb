package document

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// Documents are read with encoding/json/jsontext: one pass over the bytes,
// no reflection, and members kept as raw values until a caller decodes the
// few it needs. The options make it accept what encoding/json accepts, as
// ARO-HCP's Go code reads these documents that way: a repeated name (the
// last wins) and invalid UTF-8 (read as U+FFFD).
//
// A reader reads the objects of one document with one decoder, reset for
// each (a decoder is large, and keeps the stacks it has grown). With text,
// the document as a string, the strings it reads that hold nothing to
// decode are substrings of text rather than copies: a poll reads some
// fifty strings per document.
type reader struct {
	dec  *jsontext.Decoder
	text string // the whole document, or ""
	base int    // where the decoder's input starts in text
}

// at returns the decoder reset to read raw (in place: a bytes.Buffer is
// not copied), which starts at base in the reader's text.
func (r *reader) at(raw []byte, base int) *jsontext.Decoder {
	in := bytes.NewBuffer(raw)
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	if r.dec == nil {
		r.dec = jsontext.NewDecoder(in, opts...)
	} else {
		r.dec.Reset(in, opts...)
	}
	r.base = base
	return r.dec
}

// str decodes the string or name v the decoder has just read.
func (r *reader) str(v jsontext.Value) string {
	if r.text != "" && plain(v) {
		end := r.base + int(r.dec.InputOffset())
		return r.text[end-len(v)+1 : end-1]
	}
	return unquote(v)
}

// literal returns the text of the value v the decoder has just read.
func (r *reader) literal(v jsontext.Value) string {
	if r.text != "" {
		end := r.base + int(r.dec.InputOffset())
		return r.text[end-len(v) : end]
	}
	return string(v)
}

// plain reports whether the JSON string v decodes to its own bytes.
func plain(v jsontext.Value) bool { return bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) }

// byName finds the name v in m without decoding it when it is plain.
func byName[V any](m map[string]V, v jsontext.Value) (V, bool) {
	if plain(v) {
		x, ok := m[string(v[1:len(v)-1])] // no copy: only a map key
		return x, ok
	}
	x, ok := m[unquote(v)]
	return x, ok
}

// members are the members of a JSON object a typed decoder does not know,
// as raw JSON, carried through a rewrite untouched. Raw values are never
// changed in place, so copies of the map may share them.
type members map[string]jsontext.Value

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

// errNotObject is reported for valid JSON that is not an object; callers
// replace it with encoding/json's own message.
var errNotObject = errors.New("not a JSON object")

// readMembers reads raw, one JSON object and nothing after it, filing the
// value of each known name into vals at its index (the last of a repeated
// name wins) and, if rest is set, every other member, copied, into *rest
// (made on first use). vals are slices of raw. Bad input gets
// encoding/json's own error, so messages read as they always have.
func (r *reader) readMembers(what string, raw []byte, keys knownKeys, vals []jsontext.Value, rest *members) error {
	dec := r.at(raw, 0)
	err := r.eachMember(func(name jsontext.Value) error { return r.file(raw, name, keys, vals, rest) })
	if err == nil {
		err = atEnd(dec)
	}
	if err != nil {
		return notObject(what, raw)
	}
	return nil
}

// file reads the value of the member name, filing it as readMembers does;
// raw is the decoder's input.
func (r *reader) file(raw []byte, name jsontext.Value, keys knownKeys, vals []jsontext.Value, rest *members) error {
	i, known := byName(keys, name)
	if !known && rest == nil {
		return r.dec.SkipValue()
	}
	var k string
	if !known {
		k = unquote(name) // before the read below invalidates name
	}
	v, err := r.dec.ReadValue()
	switch {
	case err != nil:
		return err
	case known:
		vals[i] = inputOf(r.dec, raw, v)
	default:
		if *rest == nil {
			*rest = members{}
		}
		(*rest)[k] = v.Clone()
	}
	return nil
}

// eachMember reads the object the decoder is at, calling member with each
// name as read (quoted); member must read the value (or skip it). The name
// is valid only until the next read.
func (r *reader) eachMember(member func(name jsontext.Value) error) error {
	tok, err := r.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errNotObject
	}
	for r.dec.PeekKind() != '}' { // an error shows as kind 0 and again on the read
		name, err := r.dec.ReadValue()
		if err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err = r.dec.ReadToken()
	return err
}

// atEnd reports trailing data after the top-level value.
func atEnd(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); err != io.EOF {
		return fmt.Errorf("trailing data: %v", err)
	}
	return nil
}

// inputOf returns the value dec has just read as a slice of its input raw:
// what ReadValue returns is valid only until the next read.
func inputOf(dec *jsontext.Decoder, raw []byte, v jsontext.Value) jsontext.Value {
	end := int(dec.InputOffset())
	return raw[end-len(v) : end]
}

// notObject is the error for raw that is not one JSON object: encoding/json's
// own message, as documents were read before jsontext.
func notObject(what string, raw []byte) error {
	var m members // its type name is in encoding/json's message
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: not a JSON object: %w", what, err)
	}
	if m == nil {
		return fmt.Errorf("%s: is null, want a JSON object", what)
	}
	// Unreachable while jsontext and encoding/json agree (fuzzed).
	return fmt.Errorf("%s: not a JSON object", what)
}

// takeValue decodes a value filed by readMembers into v: nil (missing) or
// null leaves v as it was.
func takeValue(prefix, key string, raw jsontext.Value, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := decodeValue(raw, v); err != nil {
		return fmt.Errorf("%s%s: %s cannot be decoded: %w", prefix, key, clip(raw), err)
	}
	return nil
}

// decodeValue is json.Unmarshal(raw, v) for one valid value: done directly
// for the shapes documents hold, by encoding/json for everything else and
// for every error, so results and messages are encoding/json's.
func decodeValue(raw jsontext.Value, v any) error {
	switch dst := v.(type) {
	case *string:
		if raw.Kind() == '"' {
			*dst = unquote(raw)
			return nil
		}
	case *bool:
		if k := raw.Kind(); k == 't' || k == 'f' {
			*dst = k == 't'
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
	case *json.Number:
		if raw.Kind() == '0' {
			*dst = json.Number(raw)
			return nil
		}
	case *time.Time:
		if t, ok := decodeTime(raw); ok {
			*dst = t
			return nil
		}
	case **time.Time:
		if t, ok := decodeTime(raw); ok {
			*dst = &t
			return nil
		}
	}
	return json.Unmarshal(raw, v)
}

// decodeTime reads a JSON string as encoding/json reads a time.Time.
func decodeTime(raw jsontext.Value) (time.Time, bool) {
	var t time.Time
	if raw.Kind() != '"' {
		return t, false
	}
	var buf [64]byte
	s, _ := jsontext.AppendUnquote(buf[:0], raw)
	return t, t.UnmarshalText(s) == nil
}

// unquote decodes a valid JSON string as encoding/json does (invalid UTF-8
// becomes U+FFFD).
func unquote(raw jsontext.Value) string {
	if plain(raw) {
		return string(raw[1 : len(raw)-1])
	}
	s, _ := jsontext.AppendUnquote(nil, raw) // only invalid UTF-8 errs, and is repaired
	return string(s)
}

// clip shortens a raw value for an error message.
func clip[T ~string | ~[]byte](raw T) string {
	const max = 80
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}

// readAny reads the value the decoder is at as encoding/json decodes into
// an any with UseNumber: objects as trees, arrays as []any (empty, not
// nil), numbers as json.Number with their literal text.
func (r *reader) readAny() (any, error) {
	switch r.dec.PeekKind() {
	case '{':
		t := tree{}
		err := r.eachMember(func(name jsontext.Value) error {
			k := r.str(name)
			v, err := r.readAny()
			t[k] = v
			return err
		})
		return t, err
	case '[':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, err
		}
		l := make([]any, 0)
		for r.dec.PeekKind() != ']' {
			v, err := r.readAny()
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := r.dec.ReadToken()
		return l, err
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return v.Kind() == 't', nil
	case '"':
		return r.str(v), nil
	}
	return json.Number(r.literal(v)), nil
}

// readValue reads text, one JSON value and nothing after it, as readAny
// reads; its strings are substrings of text.
func readValue(text string) (any, error) {
	r := reader{text: text}
	r.at([]byte(text), 0)
	v, err := r.readAny()
	if err == nil {
		err = atEnd(r.dec)
	}
	return v, err
}
