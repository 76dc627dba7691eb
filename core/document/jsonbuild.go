package document

import "encoding/json"

// build validates and decodes the value at s.i in one pass.
func (s *scanner[T]) build() (any, bool) {
	if s.i >= len(s.b) {
		return nil, false
	}
	start := s.i
	switch s.b[s.i] {
	case '{':
		return s.buildObject()
	case '[':
		return s.buildArray()
	case '"':
		if !s.str() {
			return nil, false
		}
		return unquote(s.b[start:s.i]), true
	case 't':
		return true, s.lit("true")
	case 'f':
		return false, s.lit("false")
	case 'n':
		return nil, s.lit("null")
	}
	if !s.number() {
		return nil, false
	}
	return json.Number(string(s.b[start:s.i])), true
}

func (s *scanner[T]) buildObject() (any, bool) {
	t := tree{}
	ok := s.members(func(key T) bool {
		v, ok := s.build()
		t[unquote(key)] = v // a repeated key: the last one wins, as in encoding/json
		return ok
	})
	return t, ok
}

func (s *scanner[T]) buildArray() (any, bool) {
	if s.depth++; s.depth > maxDepth {
		return nil, false
	}
	l := make([]any, 0) // encoding/json decodes [] as an empty, non-nil slice
	s.i++               // '['
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return l, true
	}
	for {
		v, ok := s.build()
		if !ok {
			return nil, false
		}
		l = append(l, v)
		if done, ok := s.next(']'); !ok || done {
			return l, ok
		}
	}
}
