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
)

// Documents are read with encoding/json/jsontext: one pass over the bytes,
// no reflection, and members kept as raw values until a caller decodes the
// few it needs. The options make it accept what encoding/json accepts, as
// ARO-HCP's Go code reads these documents that way: a repeated name (the
// last wins) and invalid UTF-8 (read as U+FFFD).
func newDecoder(raw []byte) *jsontext.Decoder {
	// A bytes.Buffer is read in place, without a copy.
	return jsontext.NewDecoder(bytes.NewBuffer(raw),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// members are the members of a JSON object a typed decoder does not know,
// as raw JSON, carried through a rewrite untouched.
type members map[string]jsontext.Value

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
func readMembers(what string, raw []byte, keys knownKeys, vals []jsontext.Value, rest *members) error {
	dec := newDecoder(raw)
	err := eachMember(dec, func(name jsontext.Token) error {
		i, known := keys[name.String()]
		if !known && rest == nil {
			return dec.SkipValue()
		}
		var k string
		if !known {
			k = name.String() // before the read below invalidates name
		}
		v, err := dec.ReadValue()
		switch {
		case err != nil:
			return err
		case known:
			vals[i] = inputOf(dec, raw, v)
		default:
			if *rest == nil {
				*rest = members{}
			}
			(*rest)[k] = v.Clone()
		}
		return nil
	})
	if err == nil {
		err = atEnd(dec)
	}
	if err != nil {
		return notObject(what, raw)
	}
	return nil
}

// eachMember reads the object dec is at, calling member with each name
// token; member must read the value (or skip it). The token is valid only
// until the next read, so member must use it first.
func eachMember(dec *jsontext.Decoder, member func(name jsontext.Token) error) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errNotObject
	}
	for dec.PeekKind() != '}' { // an error shows as kind 0 and again on the read
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
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
	case *CosmosMetadata:
		if decodeCosmosMetadata(dst, raw) {
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
	var buf [128]byte
	s, _ := jsontext.AppendUnquote(buf[:0], raw) // only invalid UTF-8 errs, and is repaired
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

// readAny reads the value dec is at as encoding/json decodes into an any
// with UseNumber: objects as trees, arrays as []any (empty, not nil),
// numbers as json.Number with their literal text.
func readAny(dec *jsontext.Decoder) (any, error) {
	switch dec.PeekKind() {
	case '{':
		t := tree{}
		err := eachMember(dec, func(name jsontext.Token) error {
			k := name.String()
			v, err := readAny(dec)
			t[k] = v
			return err
		})
		return t, err
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		l := make([]any, 0)
		for dec.PeekKind() != ']' {
			v, err := readAny(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.ReadToken()
		return l, err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	}
	return nil, fmt.Errorf("unexpected %v", tok.Kind())
}
