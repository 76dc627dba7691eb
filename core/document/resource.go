package document

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Resource is a view over a cluster, node pool or external auth document.
// Accessors read and write only the members the lifecycle owns, so every
// other member (including ones this project has never heard of) is written
// back with the same meaning.
//
// A poll reads a handful of members and writes nothing, so the whole
// document is decoded only when a setter needs it: until then accessors
// read head, the members the schema names, decoded at parse.
type Resource struct {
	// Kind is KindCluster, KindNodePool or KindExternalAuth.
	Kind Kind
	// ETag is the document's _etag as read: send it as If-Match on replace.
	ETag string
	// Timestamp is _ts as read.
	Timestamp int64

	raw  string // the document as read; clones share it
	head tree   // the schema's members of raw; never modified either
	doc  tree   // the whole document without Cosmos system fields, once edited
	// partial: a projection (projection.go), head only; never written.
	// Its head is lazy: hot members read without a tree, the rest
	// decoded when read; nil once a setter has edited a copy.
	partial bool
	lazy    *lazyHead
}

// Paths into a resource document.
var (
	pProperties     = []string{"properties"}
	pCosmosMetadata = []string{"properties", "cosmosMetadata"}
	pInstanceVer    = []string{"properties", "cosmosMetadata", "instanceVersion"}
	pCMResourceID   = []string{"properties", "cosmosMetadata", "resourceID"}
	pCMPartitionKey = []string{"properties", "cosmosMetadata", "partitionKey"}
	pCMETag         = []string{"properties", "cosmosMetadata", "etag"}
	pName           = []string{"properties", "name"}
	pLocation       = []string{"properties", "location"}
	pTags           = []string{"properties", "tags"}
	pSPP            = []string{"properties", "serviceProviderProperties"}
	pInner          = []string{"properties", "properties"} // node pool and external auth
	pCustomer       = []string{"properties", "customerProperties"}
)

func spp(k string) []string      { return []string{"properties", "serviceProviderProperties", k} }
func inner(k ...string) []string { return append([]string{"properties", "properties"}, k...) }
func customer(k ...string) []string {
	return append([]string{"properties", "customerProperties"}, k...)
}

// Service-provider members (every kind keeps them in serviceProviderProperties).
const (
	keyProvisioningState                 = "provisioningState"
	keyActiveOperationID                 = "activeOperationId"
	keyClusterServiceID                  = "clusterServiceID"
	keyPendingClusterServiceID           = "pendingClusterServiceID"
	keyPendingClusterServiceIDTime       = "pendingClusterServiceIDTime" // hcpops' own
	keyRevokeCredentialsOperationID      = "revokeCredentialsOperationId"
	keyDeletionTimestamp                 = "deletionTimestamp"
	keyClusterServiceDeletionTimestamp   = "clusterServiceDeletionTimestamp"
	keyCreateOperationCompletionDeadline = "createOperationCompletionDeadline"
	keyDeleteOperationCompletionDeadline = "deleteOperationCompletionDeadline"
)

type fieldSpec struct {
	path []string
	typ  fieldType
}

// schema lists, per kind, every member an accessor reads or a setter walks
// through; ParseResource checks them so accessors cannot meet a surprise.
func schema(k Kind) []fieldSpec { return schemas[k] }

// schemas is built once: ParseResource walks a schema on every read.
var schemas = map[Kind][]fieldSpec{
	KindCluster:      buildSchema(KindCluster),
	KindNodePool:     buildSchema(KindNodePool),
	KindExternalAuth: buildSchema(KindExternalAuth),
}

func buildSchema(k Kind) []fieldSpec {
	s := []fieldSpec{
		{pProperties, tObject},
		{pCosmosMetadata, tObject},
		{pInstanceVer, tInt},
		{pCMResourceID, tString},
		{pCMPartitionKey, tString},
		{pCMETag, tString},
		{pName, tString},
		{pLocation, tString},
		{pTags, tStringMap},
		{pSPP, tObject},
		{spp(keyActiveOperationID), tString},
		{spp(keyClusterServiceID), tString},
		{spp(keyDeletionTimestamp), tTime},
		{spp(keyClusterServiceDeletionTimestamp), tTime},
		{spp(keyCreateOperationCompletionDeadline), tTime},
		{spp(keyDeleteOperationCompletionDeadline), tTime},
	}
	switch k {
	case KindCluster:
		s = append(s,
			fieldSpec{spp(keyProvisioningState), tState},
			fieldSpec{spp(keyPendingClusterServiceID), tString},
			fieldSpec{spp(keyPendingClusterServiceIDTime), tTime},
			fieldSpec{spp(keyRevokeCredentialsOperationID), tString},
			fieldSpec{pCustomer, tObject},
			fieldSpec{customer("version"), tObject},
			fieldSpec{customer("version", "id"), tString},
			fieldSpec{customer("version", "channelGroup"), tString},
			fieldSpec{customer("nodeDrainTimeoutMinutes"), tInt},
			fieldSpec{customer("api"), tObject},
			fieldSpec{customer("api", "authorizedCidrs"), tStringList},
			fieldSpec{customer("platform"), tObject},
			fieldSpec{customer("platform", "managedResourceGroup"), tString},
		)
	case KindNodePool:
		s = append(s,
			fieldSpec{pInner, tObject},
			fieldSpec{inner(keyProvisioningState), tState},
			fieldSpec{inner("version"), tObject},
			fieldSpec{inner("version", "id"), tString},
			fieldSpec{inner("version", "channelGroup"), tString},
			fieldSpec{inner("platform"), tObject},
			fieldSpec{inner("platform", "vmSize"), tString},
			fieldSpec{inner("replicas"), tInt},
			fieldSpec{inner("autoRepair"), tBool},
			fieldSpec{inner("labels"), tStringMap},
		)
	case KindExternalAuth:
		s = append(s,
			fieldSpec{pInner, tObject},
			fieldSpec{inner(keyProvisioningState), tState},
			fieldSpec{inner("issuer"), tObject},
			fieldSpec{inner("issuer", "url"), tString},
			fieldSpec{inner("issuer", "audiences"), tStringList},
			fieldSpec{inner("issuer", "ca"), tString},
		)
	}
	return s
}

// ParseResource decodes a cluster, node pool or external auth document as
// read from the store. Any other resourceType is an error, as is a member
// the lifecycle reads that holds the wrong type; both name field and value.
func ParseResource(raw []byte) (*Resource, error) {
	// One copy of the document as a string: it is what a setter decodes
	// the whole document from, and the head's strings are substrings of it.
	text := string(raw)
	doc, ok := restrict(raw, text, resourceHead)
	if !ok {
		if _, err := decodeTree("resource document", raw); err != nil {
			return nil, err
		}
		// Unreachable while jsontext and encoding/json agree (fuzzed).
		return nil, fmt.Errorf("resource document: not a JSON object")
	}
	for _, k := range []string{"id", "partitionKey", "resourceID", "resourceType", "_etag"} {
		if err := check(doc, []string{k}, tString); err != nil {
			return nil, err
		}
	}
	if err := check(doc, []string{"_ts"}, tInt); err != nil {
		return nil, err
	}
	r := &Resource{raw: text, head: doc}
	var err error
	if r.Kind, err = ResourceKind(getString(doc, []string{"resourceType"})); err != nil {
		return nil, err
	}
	r.ETag = getString(doc, []string{"_etag"})
	r.Timestamp, _ = getInt(doc, []string{"_ts"})
	for _, k := range cosmosSystemFields {
		delete(doc, k)
	}
	if _, ok := lookup(doc, pProperties); !ok {
		return nil, fmt.Errorf("properties: missing")
	}
	for _, f := range schema(r.Kind) {
		if err := check(doc, f.path, f.typ); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// view is what accessors read: the whole document once a setter has
// decoded it, the head before.
func (r *Resource) view() tree {
	if r.doc != nil {
		return r.doc
	}
	if r.lazy != nil {
		return r.lazy.get()
	}
	return r.head
}

// hotHead is the projection's hot members while nothing has edited it.
func (r *Resource) hotHead() *hotFields {
	if r.doc == nil && r.lazy != nil {
		return r.lazy.hot
	}
	return nil
}

// sppString reads a string member of serviceProviderProperties.
func (r *Resource) sppString(key string) string {
	if h := r.hotHead(); h != nil {
		v, _ := h.sppMember(key)
		return v
	}
	return getString(r.view(), spp(key))
}

// sppTime reads a time member of serviceProviderProperties.
func (r *Resource) sppTime(key string) (time.Time, bool) {
	if h := r.hotHead(); h != nil {
		v, ok := h.sppMember(key)
		if !ok {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339, v)
		return t, err == nil
	}
	return getTime(r.view(), spp(key))
}

// envelopeString reads the envelope's member key, one of envelopeHot.
func (r *Resource) envelopeString(key string) string {
	if h := r.hotHead(); h != nil {
		return h.envelope[slices.Index(envelopeHot[:], key)]
	}
	return getString(r.view(), []string{key})
}

// edit returns the whole document for a setter to change, decoding it
// from raw the first time.
func (r *Resource) edit() tree {
	if r.doc == nil && r.partial { // reads stay true; MarshalReplace still refuses
		r.doc = deepCopy(r.view()).(tree)
		r.lazy = nil
	}
	if r.doc == nil {
		r.doc = r.whole()
		r.raw, r.head = "", nil
	}
	return r.doc
}

// whole returns the whole document without Cosmos system fields: doc, or
// a fresh decode of raw that the caller may keep or change.
func (r *Resource) whole() tree {
	if r.doc != nil {
		return r.doc
	}
	v, _ := readValue(r.raw) // raw was validated by ParseResource
	doc, ok := v.(tree)
	if !ok { // a Resource that did not come from ParseResource
		return tree{}
	}
	for _, k := range cosmosSystemFields {
		delete(doc, k)
	}
	return doc
}

// Marshal renders the document as it stands (no version bump).
func (r *Resource) Marshal() ([]byte, error) {
	if r.partial {
		return nil, r.errPartial()
	}
	return json.Marshal(r.whole()) // members sorted by name, as ARO-HCP's maps marshal
}

// MarshalReplace renders the document for a store Replace of the version
// that was read: properties.cosmosMetadata.instanceVersion+1, the etag it
// was read with in cosmosMetadata.etag (as ARO-HCP writes it), and a
// missing cosmosMetadata resourceID/partitionKey filled from the envelope.
// Send r.ETag as If-Match. The receiver is not modified.
func (r *Resource) MarshalReplace() ([]byte, error) {
	if r.ETag == "" {
		return nil, fmt.Errorf("resource %s: replace needs the etag it was read with", r.ID())
	}
	if r.partial {
		return nil, r.errPartial()
	}
	return marshalReplace(r.whole(), r.InstanceVersion(), r.ETag, r.ResourceID(), r.PartitionKey())
}

// marshalReplace is doc as a replace writes it: properties.cosmosMetadata
// carries the next instanceVersion, the etag it was read with and, when
// missing, its resourceID and partitionKey, as ARO-HCP's own replaces do.
// Only the objects on the way to cosmosMetadata are copied; doc is not
// changed.
func marshalReplace(whole tree, instanceVersion int64, etag, resourceID, partitionKey string) ([]byte, error) {
	doc := shallow(whole)
	props, _ := whole["properties"].(tree)
	props = shallow(props)
	doc["properties"] = props
	cm, _ := props["cosmosMetadata"].(tree)
	cm = shallow(cm)
	props["cosmosMetadata"] = cm
	cm["instanceVersion"] = json.Number(fmt.Sprint(instanceVersion + 1))
	cm["etag"] = etag
	if s, _ := cm["resourceID"].(string); s == "" {
		cm["resourceID"] = resourceID
	}
	if s, _ := cm["partitionKey"].(string); s == "" {
		cm["partitionKey"] = partitionKey
	}
	return json.Marshal(doc)
}

// Clone returns a deep copy, safe to modify.
func (r *Resource) Clone() *Resource {
	c := *r
	if r.doc != nil {
		c.doc = deepCopy(r.doc).(tree)
	}
	return &c
}
