package document

import (
	"encoding/binary"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// Projections: what a poll reads of a document, encoded compactly so that
// the poll's view of the active set (package activeset) can hold it for
// many ticks and hand it out again without parsing JSON.
//
// An operation's projection is the whole OperationDocument (its modelled
// fields and the raw members it does not model), so the operation it
// gives back renders, and writes, exactly as ParseOperation's would.
//
// A resource's projection is its head: the members the accessors read
// (the schema). The Resource it gives back answers every accessor as the
// parsed document would, but holds no more of the document: Partial says
// so, and a write must read the document whole first (ParseResource), as
// MarshalReplace insists. That keeps what the view holds at the size of
// what the tick decides on, not of the documents.

var errProjection = errors.New("damaged projection")

// Value tags of the projection's encoding.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagString
	tagNumber
	tagArray
	tagObject
)

type projWriter struct {
	b       []byte
	scratch []byte
}

func (w *projWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *projWriter) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }

// str writes s, its UUIDs packed when that makes it shorter: the low bit
// of its length says which.
func (w *projWriter) str(s string) {
	if len(s) >= uuidLen && strings.IndexByte(s, '-') >= 8 && canPack(s) {
		if w.scratch = packUUIDs(w.scratch[:0], s); len(w.scratch) < len(s) {
			w.uvarint(uint64(len(w.scratch))<<1 | 1)
			w.b = append(w.b, w.scratch...)
			return
		}
	}
	w.uvarint(uint64(len(s)) << 1)
	w.b = append(w.b, s...)
}

func (w *projWriter) time(t time.Time) {
	b, err := t.AppendBinary(w.scratch[:0])
	if err != nil { // a zone offset that is not a whole minute: keep it as text
		b = t.AppendFormat(w.scratch[:0], time.RFC3339Nano)
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
	w.scratch = b
	w.uvarint(uint64(len(b)))
	w.b = append(w.b, b...)
}

func (w *projWriter) bool(v bool) {
	if v {
		w.b = append(w.b, tagTrue)
	} else {
		w.b = append(w.b, tagFalse)
	}
}

// value writes a tree value (what readAny decodes).
func (w *projWriter) value(v any) {
	switch v := v.(type) {
	case nil:
		w.b = append(w.b, tagNull)
	case bool:
		w.bool(v)
	case string:
		w.b = append(w.b, tagString)
		w.str(v)
	case json.Number:
		w.b = append(w.b, tagNumber)
		w.str(string(v))
	case []any:
		w.b = append(w.b, tagArray)
		w.uvarint(uint64(len(v)))
		for _, e := range v {
			w.value(e)
		}
	case tree:
		w.b = append(w.b, tagObject)
		w.uvarint(uint64(len(v)))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.str(k)
			w.value(v[k])
		}
	default: // a float64 or other Go value a setter may have put: as JSON text
		raw, _ := json.Marshal(v)
		w.b = append(w.b, tagNumber)
		w.str(string(raw))
	}
}

type projReader struct {
	text string // the whole projection; strings read are substrings of it
	i    int
	err  error
	// out holds the strings whose UUIDs were packed, written out again:
	// grown once to what they can take, so each stays where it was
	// written and the projection costs one allocation for all of them.
	out strings.Builder
}

func newProjReader(b []byte) *projReader {
	r := &projReader{text: string(b)}
	r.out.Grow(len(b) * uuidLen / (uuidLen/2 - 1)) // 17 packed bytes are at most 36
	return r
}

func (r *projReader) fail() {
	if r.err == nil {
		r.err = errProjection
	}
}

func (r *projReader) uvarint() uint64 {
	v, n := binary.Uvarint([]byte(r.text[r.i:min(len(r.text), r.i+binary.MaxVarintLen64)]))
	if n <= 0 {
		r.fail()
		return 0
	}
	r.i += n
	return v
}

func (r *projReader) varint() int64 {
	v, n := binary.Varint([]byte(r.text[r.i:min(len(r.text), r.i+binary.MaxVarintLen64)]))
	if n <= 0 {
		r.fail()
		return 0
	}
	r.i += n
	return v
}

func (r *projReader) byte() byte {
	if r.i >= len(r.text) {
		r.fail()
		return 0
	}
	r.i++
	return r.text[r.i-1]
}

func (r *projReader) str() string {
	n := r.uvarint()
	packed := n&1 != 0
	s := r.raw(n >> 1)
	if !packed || r.err != nil {
		return s
	}
	start := r.out.Len()
	if err := unpackTo(&r.out, s); err != nil {
		r.fail()
		return ""
	}
	return r.out.String()[start:]
}

// raw reads n bytes as they are.
func (r *projReader) raw(n uint64) string {
	if r.err != nil || n > uint64(len(r.text)-r.i) {
		r.fail()
		return ""
	}
	s := r.text[r.i : r.i+int(n)]
	r.i += int(n)
	return s
}

func (r *projReader) time() time.Time {
	text := r.byte() == 1
	s := r.raw(r.uvarint())
	var t time.Time
	var err error
	if text {
		t, err = time.Parse(time.RFC3339Nano, s)
	} else {
		err = t.UnmarshalBinary([]byte(s))
	}
	if err != nil {
		r.fail()
	}
	return t
}

func (r *projReader) value(depth int) any {
	if depth > 64 {
		r.fail()
		return nil
	}
	switch r.byte() {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagString:
		return r.str()
	case tagNumber:
		return json.Number(r.str())
	case tagArray:
		n := r.uvarint()
		if n > uint64(len(r.text)) {
			r.fail()
			return nil
		}
		a := make([]any, 0, n)
		for range n {
			a = append(a, r.value(depth+1))
		}
		return a
	case tagObject:
		n := r.uvarint()
		if n > uint64(len(r.text)) {
			r.fail()
			return nil
		}
		t := make(tree, n)
		for range n {
			k := r.str()
			t[k] = r.value(depth + 1)
		}
		return t
	}
	r.fail()
	return nil
}

// The members of a resource projection a tick reads: the envelope's ids
// and every string member of serviceProviderProperties (status, ids,
// deadlines), with the provisioning state wherever its kind keeps it. They
// are held as plain strings, so reading them builds no tree; the rest of
// the head is decoded only when an accessor reads it.
var envelopeHot = [...]string{"id", "partitionKey", "resourceID", "resourceType"}

type hotFields struct {
	envelope [len(envelopeHot)]string
	spp      []hotMember
	state    hotMember // provisioningState of a node pool or external auth
}

type hotMember struct {
	key, value string
	present    bool
}

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
	kind Kind
	head tree
}

func (l *lazyHead) get() tree {
	l.once.Do(func() {
		rd := newProjReader([]byte(l.rest))
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

// skip reads past a value as value does, building nothing.
func (r *projReader) skip(depth int) {
	if depth > 64 {
		r.fail()
		return
	}
	switch r.byte() {
	case tagNull, tagFalse, tagTrue:
	case tagString, tagNumber:
		r.raw(r.uvarint() >> 1) // as str wrote it: the low bit says packed
	case tagArray:
		for n := r.uvarint(); n > 0 && r.err == nil; n-- {
			r.skip(depth + 1)
		}
	case tagObject:
		for n := r.uvarint(); n > 0 && r.err == nil; n-- {
			r.raw(r.uvarint() >> 1)
			r.skip(depth + 1)
		}
	default:
		r.fail()
	}
}

// AppendProjection appends r's projection to dst.
func (r *Resource) AppendProjection(dst []byte) []byte {
	w := projWriter{b: dst}
	w.b = append(w.b, byte(r.Kind))
	w.str(r.ETag)
	w.varint(r.Timestamp)
	head := r.view()
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
	w.restOf(head, r.Kind)
	return w.b
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
	rd := newProjReader(p)
	r := &Resource{Kind: Kind(rd.byte()), partial: true}
	r.ETag = rd.str()
	r.Timestamp = rd.varint()
	h := &hotFields{}
	for i := range h.envelope {
		h.envelope[i] = rd.str()
	}
	n := rd.uvarint()
	if n > uint64(len(rd.text)) {
		rd.fail()
		n = 0
	}
	h.spp = make([]hotMember, n)
	for i := range h.spp {
		h.spp[i] = hotMember{key: rd.str(), value: rd.str(), present: true}
	}
	h.state.present = rd.byte() == 1
	h.state.value = rd.str()
	start := rd.i
	if rd.i < len(rd.text) && rd.text[rd.i] != tagObject {
		rd.fail()
	}
	if rd.skip(0); rd.err != nil || rd.i != len(rd.text) {
		return nil, fmt.Errorf("resource projection: %w", errProjection)
	}
	r.hot = h
	r.lazy = &lazyHead{rest: rd.text[start:], hot: h, kind: r.Kind}
	return r, nil
}

// Partial says the Resource holds only what its accessors read (a
// projection): read it whole before writing it.
func (r *Resource) Partial() bool { return r.partial }

// errPartial is a write of a Resource that holds only its projection.
func (r *Resource) errPartial() error {
	return fmt.Errorf("resource %s: holds only the members a poll reads; read it whole before writing it", r.ID())
}

// Operation flags in a projection.
const (
	opHasDeletion = 1 << iota
	opHasError
	opHasCredRequest
	opHasCredRevocation
	opNewNodePool
	opNewExternalAuth
	opNewCluster
)

// AppendProjection appends d's projection to dst. It is lossless: the
// document it gives back renders as d does.
func (d *OperationDocument) AppendProjection(dst []byte) []byte {
	w := projWriter{b: dst}
	p := &d.Properties
	var flags uint64
	for _, f := range []struct {
		on  bool
		bit uint64
	}{
		{d.DeletionTimestamp != nil, opHasDeletion}, {p.Error != nil, opHasError},
		{p.SystemAdminCredentialRequest != nil, opHasCredRequest},
		{p.SystemAdminCredentialRevocation != nil, opHasCredRevocation},
		{p.UsesNewNodePoolDeletionApproach, opNewNodePool},
		{p.UsesNewExternalAuthDeletionApproach, opNewExternalAuth},
		{p.UsesNewClusterDeletionApproach, opNewCluster},
	} {
		if f.on {
			flags |= f.bit
		}
	}
	w.uvarint(flags)
	for _, s := range []string{d.ID, d.PartitionKey, d.ResourceID, d.ResourceType, d.ETag,
		p.CosmosMetadata.ResourceID, p.CosmosMetadata.ETag, p.CosmosMetadata.PartitionKey,
		p.TenantID, p.ClientID, string(p.Request), p.ExternalID, p.InternalID, p.OperationID,
		p.ClientRequestID, p.CorrelationRequestID, p.NotificationURI, string(p.Status)} {
		w.str(s)
	}
	w.varint(int64(d.TTL))
	w.varint(d.Timestamp)
	w.varint(p.CosmosMetadata.InstanceVersion)
	w.time(p.StartTime)
	w.time(p.LastTransitionTime)
	if d.DeletionTimestamp != nil {
		w.time(*d.DeletionTimestamp)
	}
	if p.Error != nil {
		raw, _ := json.Marshal(p.Error) // a struct of strings and its own kind: cannot fail
		w.str(string(raw))
	}
	if c := p.SystemAdminCredentialRequest; c != nil {
		w.str(c.CertificateSigningRequest)
		w.str(c.SystemAdminCredentialRequestResourceID)
	}
	if c := p.SystemAdminCredentialRevocation; c != nil {
		w.str(c.SystemAdminCredentialRevocationResourceID)
	}
	w.unknown(d.unknown)
	w.unknown(p.unknown)
	return w.b
}

func (w *projWriter) unknown(m members) {
	w.uvarint(uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.str(k)
		w.str(string(m[k]))
	}
}

func (r *projReader) unknown() members {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.text)) {
		return nil
	}
	m := make(members, n)
	for range n {
		k := r.str()
		m[k] = jsontext.Value(r.str())
	}
	return m
}

// OperationFromProjection is the operation a projection holds.
func OperationFromProjection(b []byte) (*OperationDocument, error) {
	rd := newProjReader(b)
	d := &OperationDocument{}
	p := &d.Properties
	flags := rd.uvarint()
	var request, status string
	for _, s := range []*string{&d.ID, &d.PartitionKey, &d.ResourceID, &d.ResourceType, &d.ETag,
		&p.CosmosMetadata.ResourceID, &p.CosmosMetadata.ETag, &p.CosmosMetadata.PartitionKey,
		&p.TenantID, &p.ClientID, &request, &p.ExternalID, &p.InternalID, &p.OperationID,
		&p.ClientRequestID, &p.CorrelationRequestID, &p.NotificationURI, &status} {
		*s = rd.str()
	}
	p.Request, p.Status = Request(request), arm.ProvisioningState(status)
	d.TTL = int(rd.varint())
	d.Timestamp = rd.varint()
	p.CosmosMetadata.InstanceVersion = rd.varint()
	p.StartTime = rd.time()
	p.LastTransitionTime = rd.time()
	if flags&opHasDeletion != 0 {
		t := rd.time()
		d.DeletionTimestamp = &t
	}
	if flags&opHasError != 0 {
		p.Error = &arm.CloudErrorBody{}
		if err := json.Unmarshal([]byte(rd.str()), p.Error); err != nil {
			rd.fail()
		}
	}
	if flags&opHasCredRequest != 0 {
		p.SystemAdminCredentialRequest = &SystemAdminCredentialRequest{
			CertificateSigningRequest: rd.str(), SystemAdminCredentialRequestResourceID: rd.str()}
	}
	if flags&opHasCredRevocation != 0 {
		p.SystemAdminCredentialRevocation = &SystemAdminCredentialRevocation{SystemAdminCredentialRevocationResourceID: rd.str()}
	}
	p.UsesNewNodePoolDeletionApproach = flags&opNewNodePool != 0
	p.UsesNewExternalAuthDeletionApproach = flags&opNewExternalAuth != 0
	p.UsesNewClusterDeletionApproach = flags&opNewCluster != 0
	d.unknown = rd.unknown()
	p.unknown = rd.unknown()
	if rd.err != nil || rd.i != len(rd.text) {
		return nil, fmt.Errorf("operation projection: %w", errProjection)
	}
	return d, nil
}
