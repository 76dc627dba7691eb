package document

import (
	"bytes"
	"unicode/utf8"
)

// pathTrie names the members of a JSON object to decode: a key without
// children is decoded whole, one with children member by member.
type pathTrie map[string]pathTrie

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
				next = pathTrie{}
				cur[k] = next
			}
			cur = next
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

// restrict decodes the members of a scanned object that want names, so
// the result holds, at every path want names, exactly what a whole decode
// would hold there (a repeated key's last value included). The members of
// objects it walks into are scanned into ms's spare capacity.
func restrict(ms []rawMember, want pathTrie) tree {
	t := make(tree, len(want))
	for _, m := range ms {
		k, w, ok := m.lookup(want)
		if !ok {
			continue
		}
		if len(w) > 0 && m.val[0] == '{' {
			sub, _ := scanObject(m.val, ms[len(ms):]) // validated with its document
			t[k] = restrict(sub, w)
			continue
		}
		t[k], _ = buildValue(m.val)
	}
	return t
}

// lookup finds the member's key in want, decoding the key only when it is
// wanted (or needs unescaping to be compared).
func (m rawMember) lookup(want pathTrie) (string, pathTrie, bool) {
	body := m.key[1 : len(m.key)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		w, ok := want[string(body)]
		if !ok {
			return "", nil, false
		}
		return string(body), w, true
	}
	k := m.name()
	w, ok := want[k]
	return k, w, ok
}
