package document

import "encoding/json/jsontext"

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

// restrict reads raw, one JSON object and nothing after it, and decodes
// the members want names, so the result holds, at every path want names,
// exactly what a whole decode would hold there (a repeated name's last
// value included). Everything else is validated and skipped. text is raw
// as a string; the result's strings are substrings of it. ok is false
// when raw is not one valid JSON object.
func restrict(raw []byte, text string, want pathTrie) (tree, bool) {
	r := reader{text: text}
	dec := r.at(raw, 0)
	if dec.PeekKind() != '{' {
		return nil, false
	}
	t, err := r.readHead(want)
	if err == nil {
		err = atEnd(dec)
	}
	return t, err == nil
}

// readHead is restrict for the object the decoder is at.
func (r *reader) readHead(want pathTrie) (tree, error) {
	t := tree{}
	err := r.eachMember(func(name jsontext.Value) error {
		w, _ := byName(want, name)
		var err error
		switch {
		case w == nil:
			return r.dec.SkipValue()
		case len(w.sub) > 0 && r.dec.PeekKind() == '{':
			t[w.key], err = r.readHead(w.sub)
		default:
			t[w.key], err = r.readAny()
		}
		return err
	})
	return t, err
}
