package document

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
)

// NewOperationParams is what the frontend knows when it accepts a request.
type NewOperationParams struct {
	Request Request
	// ExternalID is the target resource (the cluster for credential ops).
	ExternalID string
	// InternalID is the CS href; ARO-HCP passes "" except for
	// RevokeCredentials (the cluster's CS ID).
	InternalID string
	// Location is the ARM location used in operationId.
	Location string
	// Name is the new operation's UUID (the caller's UUID source).
	Name string
	// Now is the caller's clock reading; stored in UTC.
	Now time.Time

	TenantID             string
	ClientID             string
	NotificationURI      string
	ClientRequestID      string
	CorrelationRequestID string
}

// NewOperation builds an operation document the way ARO-HCP's frontend does:
// startTime = lastTransitionTime = now, status Accepted (Deleting, with the
// usesNew* deletion flag of the target's kind set, for a Delete), operationId with the location,
// the location-less resource ID hashed into the document id. Render it with
// MarshalCreate.
func NewOperation(p NewOperationParams) (*OperationDocument, error) {
	req, err := ParseRequest(string(p.Request))
	if err != nil {
		return nil, err
	}
	kind, _, err := ResourceKindOfID("externalId", p.ExternalID)
	if err != nil {
		return nil, err
	}
	ext, _ := ParseResourceID("externalId", p.ExternalID)
	if p.Location == "" || strings.Contains(p.Location, "/") {
		return nil, fmt.Errorf("location: %q is not a location name", p.Location)
	}
	if _, err := uuid.Parse(p.Name); err != nil {
		return nil, fmt.Errorf("name: %q is not a UUID: %w", p.Name, err)
	}
	if p.Now.IsZero() {
		return nil, fmt.Errorf("now: the clock reading is missing")
	}
	now := p.Now.UTC()
	sub := ext.SubscriptionID
	resourceID := OperationResourceID(sub, p.Name)
	d := &OperationDocument{
		ID:           CosmosID(resourceID),
		TTL:          OperationTTL,
		PartitionKey: PartitionKey(sub),
		ResourceID:   resourceID,
		ResourceType: arm.OperationResourceType,
		Properties: Operation{
			CosmosMetadata: CosmosMetadata{
				ResourceID:      resourceID,
				InstanceVersion: 1,
				PartitionKey:    PartitionKey(sub),
			},
			TenantID:             p.TenantID,
			ClientID:             p.ClientID,
			Request:              req,
			ExternalID:           p.ExternalID,
			InternalID:           p.InternalID,
			OperationID:          OperationID(sub, p.Location, p.Name),
			ClientRequestID:      p.ClientRequestID,
			CorrelationRequestID: p.CorrelationRequestID,
			NotificationURI:      p.NotificationURI,
			StartTime:            now,
			LastTransitionTime:   now,
			Status:               arm.ProvisioningStateAccepted,
		},
	}
	if req == RequestDelete {
		d.Properties.Status = arm.ProvisioningStateDeleting
		// Only the flag of the target's kind, as ARO-HCP's
		// addDelete{Cluster,NodePool,ExternalAuth}ToTransaction set it.
		switch kind {
		case KindCluster:
			d.Properties.UsesNewClusterDeletionApproach = true
		case KindNodePool:
			d.Properties.UsesNewNodePoolDeletionApproach = true
		case KindExternalAuth:
			d.Properties.UsesNewExternalAuthDeletionApproach = true
		}
	}
	return d, nil
}
