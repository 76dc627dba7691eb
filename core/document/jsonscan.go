package document

import (
	"encoding/json"
	"unicode/utf8"
)

// The poll tick reads two documents per operation, and encoding/json's
// reflective decode into maps was most of its CPU. This scanner validates
// in one pass and either hands an object's members, undecoded, to a
// callback or builds the same values encoding/json builds (numbers as
// json.Number), so callers decode only the members they need. It accepts
// exactly what json.Valid accepts; fuzz tests hold it to that.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// text is what the scanner reads. A document scanned as a string yields
// its decoded strings as substrings of that one copy, without allocating.
type text interface{ ~string | ~[]byte }

// rawMember is one member of a JSON object: its key literal (quotes
// included) and its value, both slices of the scanned input.
type rawMember[T text] struct {
	key T
	val T
}

type scanner[T text] struct {
	b     T
	i     int
	depth int
}

// scanObject validates raw as one JSON object (surrounding whitespace
// allowed), handing each member to each in document order as it goes. ok
// is false for invalid JSON and for JSON that is not an object; each may
// have seen members by then, so a caller keeps its results only when ok.
func scanObject[T text](raw T, each func(rawMember[T])) bool {
	s := scanner[T]{b: raw}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	if !s.object(each) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// buildValue validates raw as one JSON value and decodes it as
// encoding/json decodes into an any with UseNumber.
func buildValue[T text](raw T) (any, bool) {
	s := scanner[T]{b: raw}
	s.space()
	v, ok := s.build()
	if !ok {
		return nil, false
	}
	s.space()
	return v, s.i == len(s.b)
}

func (s *scanner[T]) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// skip validates the value at s.i and moves past it.
func (s *scanner[T]) skip() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(nil)
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

// object validates the object at s.i, handing its members to each if set.
func (s *scanner[T]) object(each func(rawMember[T])) bool {
	return s.members(func(key T) bool {
		v := s.i
		if !s.skip() {
			return false
		}
		if each != nil {
			each(rawMember[T]{key: key, val: s.b[v:s.i]})
		}
		return true
	})
}

// members walks the object at s.i. For each member it reads the key and
// calls value with the key literal and s at the value, which value must
// consume (skip, build or walk into) and report whether it was valid.
func (s *scanner[T]) members(value func(key T) bool) bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		k := s.i
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() {
			return false
		}
		key := s.b[k:s.i]
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !value(key) {
			return false
		}
		if done, ok := s.next('}'); !ok || done {
			return ok
		}
	}
}

func (s *scanner[T]) array() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.i++ // '['
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.skip() {
			return false
		}
		if done, ok := s.next(']'); !ok || done {
			return ok
		}
	}
}

// next consumes what follows a member or element: a comma (and the space
// after it), or the closing byte, which ends the container (done).
func (s *scanner[T]) next(closing byte) (done, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.space()
		return false, true
	case closing:
		s.i++
		s.depth--
		return true, true
	}
	return false, false
}

func (s *scanner[T]) str() bool {
	b, i := s.b, s.i+1 // past the opening quote
	for {
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return true
		case '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					return false
				}
				for k := i + 2; k < i+6; k++ {
					if !isHex(b[k]) {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		default: // a control character
			return false
		}
	}
}

// plainByte marks the bytes a string holds as they are: all but the
// quote, the backslash and control characters.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *scanner[T]) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number follows RFC 8259's grammar, as encoding/json does.
func (s *scanner[T]) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i >= len(s.b):
		return false
	case s.b[s.i] == '0':
		s.i++
	case s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits consumes a run of digits; false if there is none.
func (s *scanner[T]) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// unquote decodes a scanned string literal as encoding/json does: directly
// for plain text and the one-letter escapes (a string input's plain text
// comes back as a substring, no copy), by encoding/json for \u escapes and
// invalid UTF-8 (which it replaces with U+FFFD).
func unquote[T text](lit T) string {
	body := lit[1 : len(lit)-1]
	i := 0
	for i < len(body) && body[i] != '\\' && body[i] < utf8.RuneSelf {
		i++
	}
	if i == len(body) {
		return string(body)
	}
	if !utf8.ValidString(string(body[i:])) {
		return unquoteSlow(lit)
	}
	buf := make([]byte, i, len(body))
	for k := range i {
		buf[k] = body[k]
	}
	for i < len(body) {
		c := body[i]
		if c != '\\' {
			buf = append(buf, c)
			i++
			continue
		}
		switch e := body[i+1]; e {
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			return unquoteSlow(lit)
		default: // '"', '\\', '/'
			buf = append(buf, e)
		}
		i += 2
	}
	return string(buf)
}

func unquoteSlow[T text](lit T) string {
	var s string
	_ = json.Unmarshal([]byte(lit), &s) // lit was validated: it always decodes
	return s
}

// is reports whether the member's key is name, decoding it only if it is
// escaped.
func (m rawMember[T]) is(name string) bool {
	body := m.key[1 : len(m.key)-1]
	if !escaped(body) {
		return string(body) == name
	}
	return m.name() == name
}

// escaped reports whether a string literal's body holds a backslash.
func escaped[T text](body T) bool {
	for i := range len(body) {
		if body[i] == '\\' {
			return true
		}
	}
	return false
}

// name decodes a member's key.
func (m rawMember[T]) name() string { return unquote(m.key) }
