package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/document"
)

// cosmosID is ARO-HCP's document id for a resource ID.
func cosmosID(resourceID string) string { return document.CosmosID(resourceID) }

// newSubscription returns a fresh subscription ID, which is also the
// partition key: fresh keys keep tests apart even in a shared container.
func newSubscription() string { return uuid.NewString() }

// doc is an ARO-HCP-shaped document under construction.
type doc map[string]any

// ID is the document's Cosmos id.
func (d doc) ID() string { return d["id"].(string) }

// ResourceID is the document's ARM resource ID.
func (d doc) ResourceID() string { return d["resourceID"].(string) }

// Set sets a dotted path, creating objects on the way.
func (d doc) Set(path string, v any) doc {
	m := map[string]any(d)
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	return d
}

// Delete removes a dotted path.
func (d doc) Delete(path string) doc {
	m := map[string]any(d)
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return d
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
	return d
}

// JSON marshals the document.
func (d doc) JSON(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("marshalling document %v: %v", d["id"], err)
	}
	return b
}

func cosmosMetadata(resourceID, sub string) map[string]any {
	return map[string]any{"resourceID": resourceID, "instanceVersion": 1, "partitionKey": sub}
}

func clusterResourceID(sub, rg, name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/" + rg +
		"/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

// clusterDoc is a cluster resource document as ARO-HCP's frontend writes it.
func clusterDoc(sub, rg, name string) doc {
	rid := clusterResourceID(sub, rg, name)
	return doc{
		"id":           cosmosID(rid),
		"partitionKey": sub,
		"resourceID":   rid,
		"resourceType": "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
		"properties": map[string]any{
			"cosmosMetadata": cosmosMetadata(rid, sub),
			"id":             rid,
			"name":           name,
			"type":           "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
			"systemData":     map[string]any{"createdBy": "u@example.com", "createdByType": "User"},
			"location":       "eastus",
			"tags":           map[string]any{"env": "dev"},
			"customerProperties": map[string]any{
				"version": map[string]any{"id": "4.20", "channelGroup": "stable"},
				"network": map[string]any{}, "platform": map[string]any{},
			},
			"serviceProviderProperties": map[string]any{
				"provisioningState":              "Accepted",
				"activeOperationId":              uuid.NewString(),
				"usesNewClusterDeletionApproach": false,
			},
			"status": map[string]any{},
		},
	}
}

// nestedDoc is a node pool or external auth document under a cluster;
// kind is "nodePools" or "externalAuths".
func nestedDoc(sub, clusterRID, kind, name string) doc {
	rid := clusterRID + "/" + kind + "/" + name
	typ := "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + kind
	return doc{
		"id":           cosmosID(rid),
		"partitionKey": sub,
		"resourceID":   rid,
		"resourceType": typ,
		"properties": map[string]any{
			"cosmosMetadata": cosmosMetadata(rid, sub),
			"id":             rid, "name": name, "type": typ,
			"properties":                map[string]any{"provisioningState": "Accepted"},
			"serviceProviderProperties": map[string]any{"activeOperationId": uuid.NewString()},
			"status":                    map[string]any{},
		},
	}
}

// operationDoc is an operation document on a cluster, 7-day ttl, in status.
func operationDoc(sub, status string) doc {
	opID := uuid.NewString()
	rid := "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/" + opID
	now := time.Date(2026, 3, 14, 1, 59, 26, 714826736, time.UTC).Format(time.RFC3339Nano)
	return doc{
		"id":           cosmosID(rid),
		"ttl":          604800,
		"partitionKey": sub,
		"resourceID":   rid,
		"resourceType": "Microsoft.RedHatOpenShift/hcpOperationStatuses",
		"properties": map[string]any{
			"cosmosMetadata":                      cosmosMetadata(rid, sub),
			"tenantId":                            "72f988bf-86f1-41af-91ab-2d7cd011db47",
			"request":                             "Create",
			"externalId":                          clusterResourceID(sub, "myRG", "myCluster"),
			"internalId":                          "",
			"operationId":                         "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + opID,
			"clientRequestId":                     uuid.NewString(),
			"correlationRequestId":                uuid.NewString(),
			"startTime":                           now,
			"lastTransitionTime":                  now,
			"status":                              status,
			"usesNewNodePoolDeletionApproach":     false,
			"usesNewExternalAuthDeletionApproach": false,
			"usesNewClusterDeletionApproach":      false,
		},
	}
}
