package document

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// Resource is a view over a cluster, node pool or external auth document.
// It holds the whole decoded document; accessors read and write only the
// members the lifecycle owns, so every other member (including ones this
// project has never heard of) is written back with the same meaning.
type Resource struct {
	// Kind is KindCluster, KindNodePool or KindExternalAuth.
	Kind Kind
	// ETag is the document's _etag as read: send it as If-Match on replace.
	ETag string
	// Timestamp is _ts as read.
	Timestamp int64

	doc tree // the document without Cosmos system fields
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
func schema(k Kind) []fieldSpec {
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
	doc, err := decodeTree("resource document", raw)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "partitionKey", "resourceID", "resourceType", "_etag"} {
		if err := check(doc, []string{k}, tString); err != nil {
			return nil, err
		}
	}
	if err := check(doc, []string{"_ts"}, tInt); err != nil {
		return nil, err
	}
	r := &Resource{doc: doc}
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

// Envelope members.

func (r *Resource) ID() string           { return getString(r.doc, []string{"id"}) }
func (r *Resource) PartitionKey() string { return getString(r.doc, []string{"partitionKey"}) }
func (r *Resource) ResourceID() string   { return getString(r.doc, []string{"resourceID"}) }
func (r *Resource) ResourceType() string { return getString(r.doc, []string{"resourceType"}) }

// InstanceVersion is properties.cosmosMetadata.instanceVersion (1 for
// legacy documents without one).
func (r *Resource) InstanceVersion() int64 {
	if v, ok := getInt(r.doc, pInstanceVer); ok && v != 0 {
		return v
	}
	return 1
}

// Name and Location are the ARM name and location (external auths have no
// location).
func (r *Resource) Name() string     { return getString(r.doc, pName) }
func (r *Resource) Location() string { return getString(r.doc, pLocation) }

// Tags are the ARM tags; nil when there are none.
func (r *Resource) Tags() map[string]string {
	m, _ := getStringMap(r.doc, pTags)
	return m
}

func (r *Resource) statePath() []string {
	if r.Kind == KindCluster {
		return spp(keyProvisioningState)
	}
	return inner(keyProvisioningState)
}

// ProvisioningState is serviceProviderProperties.provisioningState for a
// cluster and properties.properties.provisioningState for a node pool or
// external auth.
func (r *Resource) ProvisioningState() arm.ProvisioningState {
	return arm.ProvisioningState(getString(r.doc, r.statePath()))
}

// SetProvisioningState writes the state where this kind keeps it (always
// written, even when empty, as external auths do).
func (r *Resource) SetProvisioningState(s arm.ProvisioningState) {
	set(r.doc, r.statePath(), string(s))
}

func (r *Resource) ActiveOperationID() string { return getString(r.doc, spp(keyActiveOperationID)) }

// SetActiveOperationID sets activeOperationId; "" removes it (omitempty).
func (r *Resource) SetActiveOperationID(id string) { r.setString(spp(keyActiveOperationID), id) }

// ClusterServiceID is the CS href of the resource; "" if not created yet.
func (r *Resource) ClusterServiceID() string { return getString(r.doc, spp(keyClusterServiceID)) }

// SetClusterServiceID sets clusterServiceID; "" removes it.
func (r *Resource) SetClusterServiceID(href string) { r.setString(spp(keyClusterServiceID), href) }

// PendingClusterServiceID is the CS href chosen before the create POST
// (clusters only).
func (r *Resource) PendingClusterServiceID() string {
	return getString(r.doc, spp(keyPendingClusterServiceID))
}

// SetPendingClusterServiceID sets pendingClusterServiceID; "" removes it.
// Clusters only.
func (r *Resource) SetPendingClusterServiceID(href string) error {
	if err := r.need(KindCluster, keyPendingClusterServiceID); err != nil {
		return err
	}
	r.setString(spp(keyPendingClusterServiceID), href)
	return nil
}

// RevokeCredentialsOperationID is set while a credential revocation runs
// (clusters only).
func (r *Resource) RevokeCredentialsOperationID() string {
	return getString(r.doc, spp(keyRevokeCredentialsOperationID))
}

// SetRevokeCredentialsOperationID sets it; "" removes it. Clusters only.
func (r *Resource) SetRevokeCredentialsOperationID(id string) error {
	if err := r.need(KindCluster, keyRevokeCredentialsOperationID); err != nil {
		return err
	}
	r.setString(spp(keyRevokeCredentialsOperationID), id)
	return nil
}

// DeletionTimestamp is when deletion was requested.
func (r *Resource) DeletionTimestamp() (time.Time, bool) {
	return getTime(r.doc, spp(keyDeletionTimestamp))
}
func (r *Resource) SetDeletionTimestamp(t time.Time) { r.setTime(spp(keyDeletionTimestamp), t) }

// ClusterServiceDeletionTimestamp marks the CS delete as dispatched.
func (r *Resource) ClusterServiceDeletionTimestamp() (time.Time, bool) {
	return getTime(r.doc, spp(keyClusterServiceDeletionTimestamp))
}
func (r *Resource) SetClusterServiceDeletionTimestamp(t time.Time) {
	r.setTime(spp(keyClusterServiceDeletionTimestamp), t)
}

// CreateOperationCompletionDeadline is when a create must have finished.
func (r *Resource) CreateOperationCompletionDeadline() (time.Time, bool) {
	return getTime(r.doc, spp(keyCreateOperationCompletionDeadline))
}
func (r *Resource) SetCreateOperationCompletionDeadline(t time.Time) {
	r.setTime(spp(keyCreateOperationCompletionDeadline), t)
}

// DeleteOperationCompletionDeadline is when a delete must have finished.
func (r *Resource) DeleteOperationCompletionDeadline() (time.Time, bool) {
	return getTime(r.doc, spp(keyDeleteOperationCompletionDeadline))
}
func (r *Resource) SetDeleteOperationCompletionDeadline(t time.Time) {
	r.setTime(spp(keyDeleteOperationCompletionDeadline), t)
}

// SetUsesNewDeletionApproach sets this kind's usesNew*DeletionApproach flag,
// which the frontend turns on for every new delete (always written).
func (r *Resource) SetUsesNewDeletionApproach(v bool) error {
	key := map[Kind]string{
		KindCluster:      "usesNewClusterDeletionApproach",
		KindNodePool:     "usesNewNodePoolDeletionApproach",
		KindExternalAuth: "usesNewExternalAuthDeletionApproach",
	}[r.Kind]
	if key == "" {
		return fmt.Errorf("usesNew*DeletionApproach: not defined for a %s", r.Kind)
	}
	set(r.doc, spp(key), v)
	return nil
}

func (r *Resource) need(k Kind, field string) error {
	if r.Kind != k {
		return fmt.Errorf("%s: only a %s has it, this is a %s", field, k, r.Kind)
	}
	return nil
}

func (r *Resource) setString(path []string, s string) {
	if s == "" {
		unset(r.doc, path)
		return
	}
	set(r.doc, path, s)
}

// setTime writes a metav1.Time the way Kubernetes marshals it (UTC, RFC 3339
// to the second); the zero time removes the member.
func (r *Resource) setTime(path []string, t time.Time) {
	if t.IsZero() {
		unset(r.doc, path)
		return
	}
	set(r.doc, path, t.UTC().Format(time.RFC3339))
}

// Version is an OpenShift version and channel group.
type Version struct {
	ID           string
	ChannelGroup string
}

// Version is customerProperties.version for a cluster and
// properties.properties.version for a node pool.
func (r *Resource) Version() Version {
	var base []string
	switch r.Kind {
	case KindCluster:
		base = customer("version")
	case KindNodePool:
		base = inner("version")
	default:
		return Version{}
	}
	return Version{
		ID:           getString(r.doc, append(base[:len(base):len(base)], "id")),
		ChannelGroup: getString(r.doc, append(base[:len(base):len(base)], "channelGroup")),
	}
}

// NodeDrainTimeoutMinutes is the cluster's customerProperties value, if set.
func (r *Resource) NodeDrainTimeoutMinutes() (int64, bool) {
	if r.Kind != KindCluster {
		return 0, false
	}
	return getInt(r.doc, customer("nodeDrainTimeoutMinutes"))
}

// AuthorizedCIDRs is the cluster's customerProperties.api.authorizedCidrs;
// ok is false when the member is absent.
func (r *Resource) AuthorizedCIDRs() ([]string, bool) {
	if r.Kind != KindCluster {
		return nil, false
	}
	return getStringList(r.doc, customer("api", "authorizedCidrs"))
}

// ManagedResourceGroup is the cluster's
// customerProperties.platform.managedResourceGroup ("" if absent).
func (r *Resource) ManagedResourceGroup() string {
	if r.Kind != KindCluster {
		return ""
	}
	return getString(r.doc, customer("platform", "managedResourceGroup"))
}

// NodePoolSpec is what a node pool's properties.properties asks of CS.
type NodePoolSpec struct {
	Version    Version
	VMSize     string
	Replicas   int64
	AutoRepair bool
	Labels     map[string]string
}

// NodePool returns the node pool spec; an error for other kinds.
func (r *Resource) NodePool() (NodePoolSpec, error) {
	if err := r.need(KindNodePool, "properties.properties"); err != nil {
		return NodePoolSpec{}, err
	}
	s := NodePoolSpec{Version: r.Version(), VMSize: getString(r.doc, inner("platform", "vmSize"))}
	s.Replicas, _ = getInt(r.doc, inner("replicas"))
	s.AutoRepair, _ = getBool(r.doc, inner("autoRepair"))
	s.Labels, _ = getStringMap(r.doc, inner("labels"))
	return s, nil
}

// Issuer is an external auth's token issuer.
type Issuer struct {
	URL       string
	Audiences []string
	CA        string
}

// Issuer returns the external auth's properties.properties.issuer; an error
// for other kinds.
func (r *Resource) Issuer() (Issuer, error) {
	if err := r.need(KindExternalAuth, "properties.properties.issuer"); err != nil {
		return Issuer{}, err
	}
	i := Issuer{
		URL: getString(r.doc, inner("issuer", "url")),
		CA:  getString(r.doc, inner("issuer", "ca")),
	}
	i.Audiences, _ = getStringList(r.doc, inner("issuer", "audiences"))
	return i, nil
}

// Marshal renders the document as it stands (no version bump).
func (r *Resource) Marshal() ([]byte, error) {
	return json.Marshal(r.doc)
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
	// Copy only the objects on the way to cosmosMetadata.
	doc := shallow(r.doc)
	props, _ := r.doc["properties"].(tree)
	props = shallow(props)
	doc["properties"] = props
	cm, _ := props["cosmosMetadata"].(tree)
	cm = shallow(cm)
	props["cosmosMetadata"] = cm
	cm["instanceVersion"] = json.Number(fmt.Sprint(r.InstanceVersion() + 1))
	cm["etag"] = r.ETag
	if s, _ := cm["resourceID"].(string); s == "" {
		cm["resourceID"] = r.ResourceID()
	}
	if s, _ := cm["partitionKey"].(string); s == "" {
		cm["partitionKey"] = r.PartitionKey()
	}
	return json.Marshal(doc)
}

func shallow(t tree) tree {
	c := make(tree, len(t)+2)
	for k, v := range t {
		c[k] = v
	}
	return c
}

// Clone returns a deep copy, safe to modify.
func (r *Resource) Clone() *Resource {
	c := *r
	c.doc = deepCopy(r.doc).(tree)
	return &c
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case tree:
		c := make(tree, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}
