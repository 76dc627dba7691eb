package document

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
)

// ServiceProvider is a view over a cluster's or node pool's
// service-provider document (…/serviceProviderClusters/default,
// …/nodePools/{np}/serviceProviderNodePools/default), where ARO-HCP's
// frontend reads the active versions before it accepts a node pool
// version change. Like Resource, it edits only the members it owns and
// writes every other one back as read, Cosmos's system members aside.
type ServiceProvider struct {
	// ETag is the document's _etag as read ("" for a new one): send it as
	// If-Match on replace.
	ETag string

	shape spShape
	doc   tree // without Cosmos system fields
}

// spShape is where one kind keeps its active versions, in the shape
// upstream's coreapi marshals: ServiceProviderCluster status.
// control_plane_version.active_versions, ServiceProviderNodePool status.
// nodePoolVersion.activeVersions; entries {"version": "x.y.z"}, newest
// first.
type spShape struct {
	segment, typeName string
	list              []string // under properties
}

var spShapes = map[Kind]spShape{
	KindCluster: {segment: "/serviceProviderClusters/default", typeName: "serviceProviderClusters",
		list: []string{"properties", "status", "control_plane_version", "active_versions"}},
	KindNodePool: {segment: "/serviceProviderNodePools/default", typeName: "nodePools/serviceProviderNodePools",
		list: []string{"properties", "status", "nodePoolVersion", "activeVersions"}},
}

// ServiceProviderID is the resource ID of res's service-provider
// document; ok is false for a kind that has none (an external auth).
func ServiceProviderID(res *Resource) (string, bool) {
	sp, ok := spShapes[res.Kind]
	if !ok {
		return "", false
	}
	return res.ResourceID() + sp.segment, true
}

// NewServiceProvider is the service-provider document of res as the
// first writer creates it.
func NewServiceProvider(res *Resource) (*ServiceProvider, error) {
	sp, ok := spShapes[res.Kind]
	if !ok {
		return nil, fmt.Errorf("resource %s: a %s has no service-provider document", res.ResourceID(), res.Kind)
	}
	rid, pk := res.ResourceID()+sp.segment, res.PartitionKey()
	return &ServiceProvider{shape: sp, doc: tree{
		"id": CosmosID(rid), "partitionKey": pk, "resourceID": rid,
		"resourceType": arm.ClusterResourceType + "/" + sp.typeName,
		"properties": tree{
			"cosmosMetadata": tree{"resourceID": rid, "instanceVersion": json.Number("1"), "partitionKey": pk},
		},
	}}, nil
}

// ParseServiceProvider decodes a service-provider document as read from
// the store. Another resourceType, or a member it edits that holds the
// wrong type, is an error naming field and value.
func ParseServiceProvider(raw []byte) (*ServiceProvider, error) {
	doc, err := decodeTree("service-provider document", raw)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "partitionKey", "resourceID", "resourceType", "_etag"} {
		if err := check(doc, []string{k}, tString); err != nil {
			return nil, err
		}
	}
	typ := getString(doc, []string{"resourceType"})
	var shape spShape
	for _, sp := range spShapes {
		if strings.EqualFold(typ, arm.ClusterResourceType+"/"+sp.typeName) {
			shape = sp
		}
	}
	if shape.segment == "" {
		return nil, fmt.Errorf("resourceType: %q is not a service-provider cluster or node pool type", typ)
	}
	// The objects a setter walks through, and cosmosMetadata's version.
	for i := 1; i < len(shape.list); i++ {
		if err := check(doc, shape.list[:i], tObject); err != nil {
			return nil, err
		}
	}
	for _, f := range []fieldSpec{{pCosmosMetadata, tObject}, {pInstanceVer, tInt}} {
		if err := check(doc, f.path, f.typ); err != nil {
			return nil, err
		}
	}
	s := &ServiceProvider{ETag: getString(doc, []string{"_etag"}), shape: shape, doc: doc}
	for _, k := range cosmosSystemFields {
		delete(doc, k)
	}
	return s, nil
}

// ActiveVersion is the newest active version, "" when none.
func (s *ServiceProvider) ActiveVersion() string {
	list, _ := lookupAs[[]any](s.doc, s.shape.list)
	if len(list) == 0 {
		return ""
	}
	first, _ := list[0].(tree)
	v, _ := first["version"].(string)
	return strings.TrimPrefix(v, "v")
}

// SetActiveVersion makes version the only active version (hcpops reads
// Clusters Service, which reports one).
func (s *ServiceProvider) SetActiveVersion(version string) {
	set(s.doc, s.shape.list, []any{tree{"version": version}})
}

// Marshal renders a new document for a store Create.
func (s *ServiceProvider) Marshal() ([]byte, error) { return json.Marshal(s.doc) }

// MarshalReplace renders the document for a store Replace of the version
// that was read, as Resource.MarshalReplace does: instanceVersion+1, the
// etag it was read with in cosmosMetadata.etag, a missing cosmosMetadata
// resourceID/partitionKey filled from the envelope.
func (s *ServiceProvider) MarshalReplace() ([]byte, error) {
	if s.ETag == "" {
		return nil, fmt.Errorf("service-provider document %s: replace needs the etag it was read with",
			getString(s.doc, []string{"id"}))
	}
	v, ok := getInt(s.doc, pInstanceVer)
	if !ok || v == 0 {
		v = 1 // ARO-HCP reads a document without one as 1
	}
	return marshalReplace(s.doc, v, s.ETag, getString(s.doc, []string{"resourceID"}), getString(s.doc, []string{"partitionKey"}))
}

// spChannels is where a ServiceProviderCluster keeps the update channels
// the running version can move along (upstream's status.
// desiredVersionChannels, which the frontend's cluster admission reads).
var spChannels = []string{"properties", "status", "desiredVersionChannels"}

// HasChannels says whether the document is a cluster's, which keeps them.
func (s *ServiceProvider) HasChannels() bool { return s.shape.segment == spShapes[KindCluster].segment }

// DesiredVersionChannels is the channel list as stored; ok is false when
// the member is absent or is not a list of strings.
func (s *ServiceProvider) DesiredVersionChannels() (channels []string, ok bool) {
	list, ok := lookupAs[[]any](s.doc, spChannels)
	if !ok {
		return nil, false
	}
	for _, v := range list {
		c, isString := v.(string)
		if !isString {
			return nil, false
		}
		channels = append(channels, c)
	}
	return channels, true
}

// SetDesiredVersionChannels replaces the channel list (a cluster's only).
func (s *ServiceProvider) SetDesiredVersionChannels(channels []string) {
	list := make([]any, len(channels))
	for i, c := range channels {
		list[i] = c
	}
	set(s.doc, spChannels, list)
}
