package document

import (
	"fmt"
	"slices"
	"sync"
)

// The members of a resource projection a tick reads: the envelope's ids
// and every string member of serviceProviderProperties (status, ids,
// deadlines), with the provisioning state wherever its kind keeps it. They
// are held as plain strings, so reading them builds no tree; the rest of
// the head is decoded only when an accessor reads it.
var envelopeHot = [...]string{"id", "partitionKey", "resourceID", "resourceType"}

type hotFields struct {
	envelope [len(envelopeHot)]string
	spp      []hotMember
	state    struct { // provisioningState of a node pool or external auth
		value   string
		present bool
	}
}

type hotMember struct{ key, value string }

func (h *hotFields) sppMember(key string) (string, bool) {
	for _, m := range h.spp {
		if m.key == key {
			return m.value, true
		}
	}
	return "", false
}

// lazyHead is the rest of a projection's head, decoded on first read;
// clones share it, and nothing changes it once decoded.
type lazyHead struct {
	once sync.Once
	rest string
	hot  *hotFields
	head tree
}

func (l *lazyHead) get() tree {
	l.once.Do(func() {
		rd := &projReader{text: l.rest}
		t, _ := rd.value(0).(tree) // checked when the projection was read
		if t == nil {
			t = tree{}
		}
		for i, k := range envelopeHot {
			if l.hot.envelope[i] != "" {
				t[k] = l.hot.envelope[i]
			}
		}
		for _, m := range l.hot.spp {
			set(t, spp(m.key), m.value)
		}
		if l.hot.state.present {
			set(t, inner(keyProvisioningState), l.hot.state.value)
		}
		l.head = t
	})
	return l.head
}

// AppendProjection appends r's projection to dst.
func (r *Resource) AppendProjection(dst []byte) []byte {
	w := projWriter{b: dst}
	w.b = append(w.b, byte(r.Kind))
	head := r.view()
	// The rest of the head comes first, behind its length: reading the
	// projection then checks where it ends without walking it (the walk
	// showed in the unchanged tick's profile: see
	// docs/decisions/active-set-view.md#a-projections-room), and the room
	// the hot strings are unpacked into is sized to them alone (see
	// projReader.str), not to the rest, which is decoded only when an
	// accessor reads it.
	rest := projWriter{scratch: w.scratch}
	rest.restOf(head, r.Kind)
	w.uvarint(uint64(len(rest.b)))
	w.b = append(w.b, rest.b...)
	w.scratch = rest.scratch
	w.str(r.ETag)
	w.varint(r.Timestamp)
	for _, k := range envelopeHot {
		v, _ := head[k].(string)
		w.str(v)
	}
	sp, _ := lookupAs[tree](head, pSPP)
	keys := make([]string, 0, len(sp))
	for k := range sp {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	n := 0
	for _, k := range keys {
		if _, ok := sp[k].(string); ok {
			n++
		}
	}
	w.uvarint(uint64(n))
	for _, k := range keys {
		if v, ok := sp[k].(string); ok {
			w.str(k)
			w.str(v)
		}
	}
	state, hasState := "", false
	if r.Kind != KindCluster {
		state, hasState = lookupAs[string](head, inner(keyProvisioningState))
	}
	w.b = append(w.b, 0)
	if hasState {
		w.b[len(w.b)-1] = 1
	}
	w.str(state)
	return w.end()
}

// restOf writes head without the members the projection holds hot.
func (w *projWriter) restOf(head tree, k Kind) {
	// hot says whether the member key of the object at parent (its two
	// names, at depth) is held hot.
	hot := func(depth int, parent [2]string, key string, v any) bool {
		if _, str := v.(string); !str {
			return false
		}
		switch {
		case depth == 0:
			return slices.Contains(envelopeHot[:], key)
		case depth != 2 || parent[0] != "properties":
			return false
		case parent[1] == "serviceProviderProperties":
			return true
		}
		return k != KindCluster && parent[1] == "properties" && key == keyProvisioningState
	}
	var object func(t tree, depth int, parent [2]string)
	object = func(t tree, depth int, parent [2]string) {
		keys := make([]string, 0, len(t))
		for key, v := range t {
			if !hot(depth, parent, key, v) {
				keys = append(keys, key)
			}
		}
		slices.Sort(keys) // an order the dictionary's shares
		w.b = append(w.b, tagObject)
		w.uvarint(uint64(len(keys)))
		for _, key := range keys {
			w.str(key)
			if sub, ok := t[key].(tree); ok && depth < 2 {
				next := parent
				next[depth] = key
				object(sub, depth+1, next)
				continue
			}
			w.value(t[key])
		}
	}
	object(head, 0, [2]string{})
}

// ResourceFromProjection is the Resource a projection holds: Partial, so
// it answers reads and refuses to be written.
func ResourceFromProjection(p []byte) (*Resource, error) {
	return resourceFrom(newProjReader(p).ended())
}

// ResourceFromOwnedProjection is ResourceFromProjection without a copy of
// p: the resource's strings are p's bytes, so p must never change after
// (the caller gives it away).
func ResourceFromOwnedProjection(p []byte) (*Resource, error) {
	return resourceFrom(ownedProjReader(p).ended())
}

// projected is what a resource projection decodes to, in one allocation:
// a tick decodes one per operation, and four allocations each cost it more
// than reading the members.
type projected struct {
	r    Resource
	lazy lazyHead
	hot  hotFields
	spp  [8]hotMember // room for the string members most resources have
}

func resourceFrom(rd *projReader) (*Resource, error) {
	pr := &projected{}
	r := &pr.r
	r.Kind, r.partial = Kind(rd.byte()), true
	rest := rd.raw(rd.uvarint())
	if rest == "" || rest[0] != tagObject {
		rd.fail()
	}
	r.ETag = rd.str()
	r.Timestamp = rd.varint()
	h := &pr.hot
	for i := range h.envelope {
		h.envelope[i] = rd.str()
	}
	n := rd.uvarint()
	if n > uint64(len(rd.text)) {
		rd.fail()
		n = 0
	}
	if h.spp = pr.spp[:]; n > uint64(len(pr.spp)) {
		h.spp = make([]hotMember, n)
	}
	h.spp = h.spp[:n]
	for i := range h.spp {
		h.spp[i] = hotMember{key: rd.str(), value: rd.str()}
	}
	h.state.present = rd.byte() == 1
	h.state.value = rd.str()
	if rd.err != nil || rd.i != len(rd.text) {
		return nil, fmt.Errorf("resource projection: %w", errProjection)
	}
	pr.lazy.rest, pr.lazy.hot = rest, h
	r.lazy = &pr.lazy
	return r, nil
}

// Partial says the Resource holds only what its accessors read (a
// projection): read it whole before writing it.
func (r *Resource) Partial() bool { return r.partial }

// errPartial is a write of a Resource that holds only its projection.
func (r *Resource) errPartial() error {
	return fmt.Errorf("resource %s: holds only the members a poll reads; read it whole before writing it", r.ID())
}
