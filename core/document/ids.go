package document

import (
	"crypto/sha1" //nolint:gosec // UUIDv5 is SHA-1 by definition (RFC 4122)
	"fmt"
	"strings"
	"unicode/utf8"

	azarm "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
)

// cosmosIDNamespace is the UUIDv5 namespace ARO-HCP hashes lower-cased
// resource IDs in (coreapi.ResourceIDStringToCosmosID).
var cosmosIDNamespace = uuid.MustParse("bf1ee0a1-0147-41ed-a083-d3cbbf7bea99")

// CanonicalUUID accepts only the 8-4-4-4-12 form ARM uses for
// subscription and operation ids and lowers it, as partition keys and
// document ids are: the one rule for an id taken from a request path.
func CanonicalUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	if _, err := uuid.Parse(s); err != nil {
		return "", false
	}
	return strings.ToLower(s), true
}

// SubscriptionOf is the subscription segment of an ARM resource ID ("" when
// it has none), read without a full parse and without allocating: a tick
// asks it of every operation it polls. It reads the shape only; validate
// the ID with ParseResourceID where that matters.
func SubscriptionOf(resourceID string) string {
	for s := resourceID; s != ""; {
		var seg string
		seg, s, _ = strings.Cut(s, "/")
		if strings.EqualFold(seg, "subscriptions") {
			sub, _, _ := strings.Cut(s, "/")
			return sub
		}
	}
	return ""
}

// CosmosID is the Cosmos document id of the resource with this ARM resource
// ID: UUIDv5 of the lower-cased ID. For an operation, pass the location-less
// OperationResourceID, not the operationId.
//
// A tick asks it of every operation it polls, so it hashes in a stack
// buffer and allocates only the answer (uuid.NewSHA1 allocates the hash,
// the lowered copy and the string, which showed in an unchanged tick's
// profile: docs/decisions/active-set-view.md#cosmosid).
func CosmosID(resourceID string) string {
	var buf [256]byte
	in := buf[:0]
	if len(resourceID)+len(cosmosIDNamespace) > len(buf) {
		in = make([]byte, 0, len(cosmosIDNamespace)+len(resourceID))
	}
	in = append(in, cosmosIDNamespace[:]...)
	in = appendLower(in, resourceID)
	sum := sha1.Sum(in)
	var u uuid.UUID
	copy(u[:], sum[:])
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	return u.String()
}

// appendLower appends s lowered as strings.ToLower would, without a copy
// of its own when s is ASCII.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// PartitionKey is the Cosmos partition key of every document of a
// subscription: the lower-cased subscription ID.
func PartitionKey(subscriptionID string) string {
	return strings.ToLower(subscriptionID)
}

// ParseResourceID parses an ARM resource ID with the Azure SDK. field names
// where the value came from, so the error says which field was bad.
func ParseResourceID(field, value string) (*azarm.ResourceID, error) {
	id, err := azarm.ParseResourceID(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not an ARM resource ID: %w", field, value, err)
	}
	return id, nil
}

// checkResourceID is ParseResourceID for a caller that needs only the
// verdict: IDs in the shapes this project writes pass without the SDK.
func checkResourceID(field, value string) error {
	if _, ok := quickID(value); ok {
		return nil
	}
	_, err := ParseResourceID(field, value)
	return err
}

// maxQuickSegments bounds the IDs quickID reads: a child resource has ten.
const maxQuickSegments = 10

// quickID recognises, without the Azure SDK, the IDs every poll reads: a
// resource in a resource group (/subscriptions/{s}/resourceGroups/{rg}/
// providers/{ns}/{type}/{name}[/{type}/{name}]) or a location-qualified
// provider resource (/subscriptions/{s}/providers/{ns}/locations/{l}/
// {type}/{name}), spelled plainly: printable ASCII, no empty segment, no
// nested "providers". ok means the SDK parses it too, and kind is then
// what ResourceKindOfID says when that is a cluster, node pool or external
// auth (KindOther otherwise: ask the SDK for the error). ok is false for
// anything else, which the SDK must judge. A fuzz test holds it to that.
// The SDK's parser builds a ResourceID per segment, far more than the rest
// of a poll costs.
func quickID(id string) (kind Kind, ok bool) {
	if len(id) < 2 || id[0] != '/' {
		return KindOther, false
	}
	var segs [maxQuickSegments]string
	n, start := 0, 1
	for i := 1; i <= len(id); i++ {
		if i < len(id) && id[i] != '/' {
			if c := id[i]; c <= ' ' || c >= 0x7f {
				return KindOther, false
			}
			continue
		}
		if i == start || n == len(segs) {
			return KindOther, false
		}
		segs[n] = id[start:i]
		n++
		start = i + 1
	}
	if n < 8 || n%2 != 0 || !strings.EqualFold(segs[0], "subscriptions") {
		return KindOther, false
	}
	rest := segs[2:n]
	var types []string // the {type}, {name} pairs after the provider namespace
	switch {
	case strings.EqualFold(rest[0], "resourceGroups") && strings.EqualFold(rest[2], "providers"):
		types = rest[4:]
	case strings.EqualFold(rest[0], "providers") && strings.EqualFold(rest[2], "locations"):
		types = rest[4:]
		for i := 0; i < len(types); i += 2 {
			if strings.EqualFold(types[i], "providers") {
				return KindOther, false
			}
		}
		return KindOther, true
	default:
		return KindOther, false
	}
	for i := 0; i < len(types); i += 2 {
		if strings.EqualFold(types[i], "providers") {
			return KindOther, false
		}
	}
	if !strings.EqualFold(rest[3], arm.ProviderNamespace) || !strings.EqualFold(types[0], arm.ClustersType) {
		return KindOther, true
	}
	switch {
	case len(types) == 2:
		return KindCluster, true
	case len(types) == 4 && strings.EqualFold(types[2], arm.NodePoolsType):
		return KindNodePool, true
	case len(types) == 4 && strings.EqualFold(types[2], arm.ExternalAuthsType):
		return KindExternalAuth, true
	}
	return KindOther, true
}

// OperationResourceID is the location-less ID an operation document is
// stored under (and hashed into its Cosmos id):
// /subscriptions/{sub}/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/{name}.
func OperationResourceID(subscriptionID, operationName string) string {
	return "/subscriptions/" + subscriptionID + "/providers/" + arm.ProviderNamespace + "/" +
		arm.OperationStatusesType + "/" + operationName
}

// OperationID is the location-qualified ID ARM polls (the operation's
// operationId and the ARM status body's id).
func OperationID(subscriptionID, location, operationName string) string {
	return "/subscriptions/" + subscriptionID + "/providers/" + arm.ProviderNamespace + "/locations/" +
		location + "/" + arm.OperationStatusesType + "/" + operationName
}

// OperationResultID is the location-qualified hcpOperationResults path ARM
// reads the result from (the Location header).
func OperationResultID(subscriptionID, location, operationName string) string {
	return "/subscriptions/" + subscriptionID + "/providers/" + arm.ProviderNamespace + "/locations/" +
		location + "/" + arm.OperationResultsType + "/" + operationName
}

// SubscriptionResourceID is the resource ID of a subscription document.
func SubscriptionResourceID(subscriptionID string) string {
	return "/subscriptions/" + subscriptionID
}

// Kind is what a document (or a resource ID) is about.
type Kind int

const (
	KindOther Kind = iota
	KindOperation
	KindCluster
	KindNodePool
	KindExternalAuth
)

func (k Kind) String() string {
	switch k {
	case KindOperation:
		return "operation"
	case KindCluster:
		return "cluster"
	case KindNodePool:
		return "node pool"
	case KindExternalAuth:
		return "external auth"
	}
	return "other"
}

// kindOfType maps a resource type (any casing) to a Kind; KindOther when it
// is none of ours.
func kindOfType(resourceType string) Kind {
	switch {
	case strings.EqualFold(resourceType, arm.OperationResourceType):
		return KindOperation
	case strings.EqualFold(resourceType, arm.ClusterResourceType):
		return KindCluster
	case strings.EqualFold(resourceType, arm.NodePoolResourceType):
		return KindNodePool
	case strings.EqualFold(resourceType, arm.ExternalAuthResourceType):
		return KindExternalAuth
	}
	return KindOther
}

// ResourceKind maps a resource type (any casing) to the resource it names:
// cluster, node pool or external auth. Anything else is an error.
func ResourceKind(resourceType string) (Kind, error) {
	k := kindOfType(resourceType)
	if k != KindCluster && k != KindNodePool && k != KindExternalAuth {
		return KindOther, fmt.Errorf("resourceType: %q is not a cluster, node pool or external auth type", resourceType)
	}
	return k, nil
}

var (
	clusterChain = []azarm.ResourceType{
		azarm.TenantResourceType, azarm.SubscriptionResourceType, azarm.ResourceGroupResourceType,
		azarm.NewResourceType(arm.ProviderNamespace, arm.ClustersType),
	}
	nodePoolChain     = append(clusterChain[:len(clusterChain):len(clusterChain)], azarm.NewResourceType(arm.ProviderNamespace, arm.ClustersType+"/"+arm.NodePoolsType))
	externalAuthChain = append(clusterChain[:len(clusterChain):len(clusterChain)], azarm.NewResourceType(arm.ProviderNamespace, arm.ClustersType+"/"+arm.ExternalAuthsType))
)

// ResourceKindOfID parses a resource ID and tells which of our resources it
// names. The whole ancestry must match (subscription, resource group,
// cluster[, child]), so an extension resource with a look-alike type is
// refused. field names the value's origin for the error.
func ResourceKindOfID(field, resourceID string) (Kind, *azarm.ResourceID, error) {
	id, err := ParseResourceID(field, resourceID)
	if err != nil {
		return KindOther, nil, err
	}
	k, err := ResourceKind(id.ResourceType.String())
	if err != nil {
		return KindOther, nil, fmt.Errorf("%s: %q: resource type %q is not a cluster, node pool or external auth", field, resourceID, id.ResourceType.String())
	}
	chain := clusterChain
	switch k {
	case KindNodePool:
		chain = nodePoolChain
	case KindExternalAuth:
		chain = externalAuthChain
	}
	if err := id.ValidateResourceTypeChain(chain); err != nil {
		return KindOther, nil, fmt.Errorf("%s: %q: %w", field, resourceID, err)
	}
	return k, id, nil
}

// ParentClusterID returns the cluster resource ID a node pool or external
// auth belongs to, in the casing of the given ID. A cluster or anything else
// is an error.
func ParentClusterID(resourceID string) (string, error) {
	k, id, err := ResourceKindOfID("resourceID", resourceID)
	if err != nil {
		return "", err
	}
	if k != KindNodePool && k != KindExternalAuth {
		return "", fmt.Errorf("resourceID: %q is a %s, which has no parent cluster", resourceID, k)
	}
	return id.Parent.String(), nil
}
