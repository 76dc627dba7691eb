package document

import "unicode/utf8"

// pathTrie names the members of a JSON object to decode: a key without
// children is decoded whole, one with children member by member.
type pathTrie map[string]*pathNode

type pathNode struct {
	key string // the map's key, stored in decoded trees without a copy
	sub pathTrie
}

// resourceHead is every member a Resource accessor reads, for any kind,
// with the objects on the way to them: the envelope and the schemas. It is
// built once and never changed.
var resourceHead = func() pathTrie {
	t := pathTrie{}
	add := func(path []string) {
		cur := t
		for _, k := range path {
			next, ok := cur[k]
			if !ok {
				next = &pathNode{key: k, sub: pathTrie{}}
				cur[k] = next
			}
			cur = next.sub
		}
	}
	for _, k := range []string{"id", "partitionKey", "resourceID", "resourceType", "_etag", "_ts"} {
		add([]string{k})
	}
	for _, k := range []Kind{KindCluster, KindNodePool, KindExternalAuth} {
		for _, f := range schema(k) {
			add(f.path)
		}
	}
	return t
}()

// restrict validates raw as a JSON object and decodes the members want
// names, so the result holds, at every path want names, exactly what a
// whole decode would hold there (a repeated key's last value included).
// ok is false when raw is not a valid JSON object. It is one pass: the
// objects want goes into are decoded as they are validated.
func restrict(raw string, want pathTrie) (tree, bool) {
	s := scanner[string]{b: raw}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return nil, false
	}
	t, ok := s.restrict(want)
	s.space()
	return t, ok && s.i == len(s.b)
}

// restrict is restrict for the object at s.i.
func (s *scanner[T]) restrict(want pathTrie) (tree, bool) {
	t := tree{}
	ok := s.members(func(key T) bool {
		w := rawMember[T]{key: key}.lookup(want)
		switch {
		case w == nil:
			return s.skip()
		case len(w.sub) > 0 && s.i < len(s.b) && s.b[s.i] == '{':
			sub, ok := s.restrict(w.sub)
			t[w.key] = sub
			return ok
		default:
			v, ok := s.build()
			t[w.key] = v
			return ok
		}
	})
	return t, ok
}

// lookup finds the member's key in want (nil when it is not wanted),
// decoding the key only when it is escaped or needs repair.
func (m rawMember[T]) lookup(want pathTrie) *pathNode {
	body := m.key[1 : len(m.key)-1]
	if !escaped(body) && utf8.ValidString(string(body)) {
		return want[string(body)]
	}
	return want[m.name()]
}
