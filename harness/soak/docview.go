package soak

import (
	"encoding/json"
	"fmt"
	"time"
)

// docKey names one document of the Resources container.
type docKey struct{ pk, id string }

func (k docKey) String() string { return k.pk + "/" + k.id }

// docVersion is what the soak reads from every stored document, whatever
// its kind: where it is, which version it is and whether it is soft-deleted.
type docVersion struct {
	key      docKey
	resource string // resourceID, to name the document in reports
	etag     string
	version  int64 // properties.cosmosMetadata.instanceVersion
	deleted  bool  // deletionTimestamp is set: a soft delete
	// status is an operation's status, csID a resource's CS href; ""
	// for the other kinds.
	status, csID string
	pendingID    string    // a cluster's pendingClusterServiceID: CS may have it
	seen         time.Time // when the soak's observer first read it
}

func readVersion(body []byte) (docVersion, error) {
	var d struct {
		ID           string          `json:"id"`
		PartitionKey string          `json:"partitionKey"`
		ResourceID   string          `json:"resourceID"`
		ETag         string          `json:"_etag"`
		Deleted      json.RawMessage `json:"deletionTimestamp"`
		Properties   struct {
			CosmosMetadata struct {
				InstanceVersion *int64 `json:"instanceVersion"`
			} `json:"cosmosMetadata"`
			// Other documents have fields of these names of other shapes.
			Status json.RawMessage `json:"status"`
			SPP    json.RawMessage `json:"serviceProviderProperties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return docVersion{}, fmt.Errorf("decoding a stored document: %w", err)
	}
	if d.ID == "" || d.PartitionKey == "" {
		return docVersion{}, fmt.Errorf("stored document has id %q and partitionKey %q, want both", d.ID, d.PartitionKey)
	}
	v := docVersion{key: docKey{pk: d.PartitionKey, id: d.ID}, resource: d.ResourceID, etag: d.ETag, version: 1,
		deleted: len(d.Deleted) > 0 && string(d.Deleted) != "null"}
	_ = json.Unmarshal(d.Properties.Status, &v.status) // an operation's; "" for the rest
	var spp struct {
		ClusterServiceID        string `json:"clusterServiceID"`
		PendingClusterServiceID string `json:"pendingClusterServiceID"`
	}
	if json.Unmarshal(d.Properties.SPP, &spp) == nil {
		v.csID, v.pendingID = spp.ClusterServiceID, spp.PendingClusterServiceID
	}
	if iv := d.Properties.CosmosMetadata.InstanceVersion; iv != nil {
		v.version = *iv // documents without one are version 1, as ARO-HCP reads them
	}
	return v, nil
}
