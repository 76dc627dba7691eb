package document

import (
	"fmt"
	"maps"
	"path"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// OperationTTL is the Cosmos TTL, in seconds, stamped on every operation
// write (7 days, ARO-HCP's TimeToLiveForInternal). Cosmos counts it from the
// last write.
const OperationTTL = 604800

// Request is the kind of asynchronous operation requested.
type Request string

const (
	RequestCreate            Request = "Create"
	RequestUpdate            Request = "Update"
	RequestDelete            Request = "Delete"
	RequestRequestCredential Request = "RequestCredential"
	RequestRevokeCredentials Request = "RevokeCredentials"
)

// ParseRequest accepts exactly ARO-HCP's PascalCase request values.
func ParseRequest(s string) (Request, error) {
	switch r := Request(s); r {
	case RequestCreate, RequestUpdate, RequestDelete, RequestRequestCredential, RequestRevokeCredentials:
		return r, nil
	}
	return "", fmt.Errorf("request: %q is not one of Create, Update, Delete, RequestCredential, RevokeCredentials", s)
}

// parseProvisioningState accepts the states ARO-HCP defines.
func parseProvisioningState(field, s string) (arm.ProvisioningState, error) {
	switch p := arm.ProvisioningState(s); p {
	case arm.ProvisioningStateAccepted, arm.ProvisioningStateProvisioning, arm.ProvisioningStateUpdating,
		arm.ProvisioningStateDeleting, arm.ProvisioningStateAwaitingSecret, arm.ProvisioningStateSucceeded,
		arm.ProvisioningStateFailed, arm.ProvisioningStateCanceled:
		return p, nil
	}
	return "", fmt.Errorf("%s: %q is not a provisioning state", field, s)
}

// CosmosMetadata is properties.cosmosMetadata.
type CosmosMetadata struct {
	ResourceID string `json:"resourceID"`
	// ETag is stale by design (ARO-HCP writes the previous etag); on read it
	// is overwritten from _etag, so after ParseOperation it is current.
	ETag string `json:"etag,omitempty"`
	// InstanceVersion is 1 on create and +1 on every replace.
	InstanceVersion int64  `json:"instanceVersion"`
	PartitionKey    string `json:"partitionKey"`
}

// SystemAdminCredentialRequest is the new (CSR) credential request payload.
type SystemAdminCredentialRequest struct {
	CertificateSigningRequest              string `json:"certificateSigningRequest,omitempty"`
	SystemAdminCredentialRequestResourceID string `json:"systemAdminCredentialRequestResourceID,omitempty"`
}

// SystemAdminCredentialRevocation is the credential revocation payload.
type SystemAdminCredentialRevocation struct {
	SystemAdminCredentialRevocationResourceID string `json:"systemAdminCredentialRevocationResourceID,omitempty"`
}

// Operation is ARO-HCP's coreapi.Operation, the envelope's properties.
// Resource IDs are kept as the strings stored, so their casing survives.
type Operation struct {
	CosmosMetadata CosmosMetadata
	// TenantID and ClientID identify the caller; empty for implicit ops.
	TenantID string
	ClientID string
	Request  Request
	// ExternalID is the target resource ID (the cluster for credential ops).
	ExternalID string
	// InternalID is a CS href; always written, "" when unset.
	InternalID string
	// OperationID is the location-qualified ID ARM polls.
	OperationID          string
	ClientRequestID      string
	CorrelationRequestID string
	// NotificationURI is cleared once ARM has been notified.
	NotificationURI    string
	StartTime          time.Time
	LastTransitionTime time.Time
	Status             arm.ProvisioningState
	Error              *arm.CloudErrorBody

	UsesNewNodePoolDeletionApproach     bool
	UsesNewExternalAuthDeletionApproach bool
	UsesNewClusterDeletionApproach      bool

	SystemAdminCredentialRequest    *SystemAdminCredentialRequest
	SystemAdminCredentialRevocation *SystemAdminCredentialRevocation

	// unknown holds properties members this package does not model.
	unknown members
}

// OperationDocument is the Cosmos envelope of an operation.
type OperationDocument struct {
	ID           string
	TTL          int
	PartitionKey string
	ResourceID   string
	ResourceType string
	// DeletionTimestamp is set only on soft-deleted documents.
	DeletionTimestamp *time.Time
	Properties        Operation

	// ETag is the document's _etag as read: send it as If-Match on replace.
	ETag string
	// Timestamp is _ts (seconds since the epoch) as read.
	Timestamp int64

	// unknown holds envelope members this package does not model; Cosmos
	// system fields are dropped (the store owns them).
	unknown members

	// targetKind is TargetKind's answer for the externalId targetOf, as
	// its projection recorded it: a tick asks it of every operation two
	// or three times, and reading the id each time showed in the unchanged
	// tick's profile (see
	// docs/decisions/active-set-view.md#an-operations-target-kind).
	targetKind Kind
	targetOf   string
	// target is TargetDocument's answer, as its projection recorded it.
	target targetDoc
}

// targetDoc is TargetDocument's answer for the externalId targetOf (it is
// recorded with the target kind) and the partitionKey in; set is false
// until one is recorded.
type targetDoc struct {
	in, id string
	ok     bool
	set    bool
}

// SetStatus records a status change as ARO-HCP's UpdateOperationStatus
// does: lastTransitionTime = now (UTC), status = s, and the error only when
// a new one is given (an error is never cleared). Decide first with
// state.NeedToPatchOperation whether to write at all.
func (o *Operation) SetStatus(now time.Time, s arm.ProvisioningState, err *arm.CloudErrorBody) {
	o.LastTransitionTime = now.UTC()
	o.Status = s
	if err != nil {
		o.Error = cloneError(err)
	}
}

// Clone returns a deep copy, safe to modify.
func (d *OperationDocument) Clone() *OperationDocument {
	c := *d
	if d.DeletionTimestamp != nil {
		t := *d.DeletionTimestamp
		c.DeletionTimestamp = &t
	}
	c.unknown = maps.Clone(d.unknown)
	c.Properties.unknown = maps.Clone(d.Properties.unknown)
	c.Properties.Error = cloneError(d.Properties.Error)
	if r := d.Properties.SystemAdminCredentialRequest; r != nil {
		cr := *r
		c.Properties.SystemAdminCredentialRequest = &cr
	}
	if r := d.Properties.SystemAdminCredentialRevocation; r != nil {
		cr := *r
		c.Properties.SystemAdminCredentialRevocation = &cr
	}
	return &c
}

func cloneError(e *arm.CloudErrorBody) *arm.CloudErrorBody {
	if e == nil {
		return nil
	}
	c := *e
	if e.Details != nil {
		c.Details = make([]arm.CloudErrorBody, len(e.Details))
		for i := range e.Details {
			c.Details[i] = *cloneError(&e.Details[i])
		}
	}
	return &c
}

// Name is the operation's UUID: the last segment of operationId (or, for a
// document without one, of its resourceID). Resources point at their
// operation with it (activeOperationId).
func (d *OperationDocument) Name() string {
	if id := d.Properties.OperationID; id != "" {
		return path.Base(id)
	}
	return path.Base(d.ResourceID)
}

// SubscriptionID is the subscription the operation's target lives in, from
// externalId (or the document's own resourceID when there is none).
func (d *OperationDocument) SubscriptionID() (string, error) {
	field, id := "properties.externalId", d.Properties.ExternalID
	if id == "" {
		field, id = "resourceID", d.ResourceID
	}
	rid, err := ParseResourceID(field, id)
	if err != nil {
		return "", err
	}
	return rid.SubscriptionID, nil
}

// TargetKind says whether externalId names a cluster, node pool or external
// auth; anything else (or no externalId) is an error.
func (d *OperationDocument) TargetKind() (Kind, error) {
	if d.Properties.ExternalID == "" {
		return KindOther, fmt.Errorf("properties.externalId: missing")
	}
	if d.targetOf != "" && d.targetOf == d.Properties.ExternalID {
		return d.targetKind, nil
	}
	if k, ok := quickID(d.Properties.ExternalID); ok && k != KindOther {
		return k, nil
	}
	k, _, err := ResourceKindOfID("properties.externalId", d.Properties.ExternalID)
	return k, err
}

// TargetInPartition says whether externalId names a resource of the
// operation's own partition (its subscription, lower-cased, is the
// partitionKey): the only partition its resource is read from.
func (d *OperationDocument) TargetInPartition() bool {
	if t := d.recordedTarget(); t != nil {
		return t.ok
	}
	return targetInPartition(d.PartitionKey, d.Properties.ExternalID)
}

// TargetDocument is the id of the resource document externalId names
// (CosmosID) when TargetInPartition; "" when not. A tick asks it of every
// operation, so a projected one carries the answer, worked out once when
// it was projected (a SHA-1 and two walks of the id otherwise).
func (d *OperationDocument) TargetDocument() string {
	if t := d.recordedTarget(); t != nil {
		return t.id
	}
	return targetDocument(d.PartitionKey, d.Properties.ExternalID)
}

// recordedTarget is the answer the projection recorded, while it still
// holds for the operation's externalId and partitionKey.
func (d *OperationDocument) recordedTarget() *targetDoc {
	if t := &d.target; t.set && d.targetOf != "" && d.targetOf == d.Properties.ExternalID && t.in == d.PartitionKey {
		return t
	}
	return nil
}

func targetInPartition(partitionKey, externalID string) bool {
	return PartitionKey(SubscriptionOf(externalID)) == partitionKey
}

func targetDocument(partitionKey, externalID string) string {
	if !targetInPartition(partitionKey, externalID) {
		return ""
	}
	return CosmosID(externalID)
}

// ToStatus renders the ARM operation-status body: endTime only once
// terminal.
func (d *OperationDocument) ToStatus() arm.OperationStatus {
	o := &d.Properties
	start := o.StartTime
	s := arm.OperationStatus{
		ID:        o.OperationID,
		Name:      d.Name(),
		Status:    o.Status,
		StartTime: &start,
		Error:     cloneError(o.Error),
	}
	if o.Status.IsTerminal() {
		end := o.LastTransitionTime
		s.EndTime = &end
	}
	if s.Error == nil {
		s.Error = missingError(o.Status)
	}
	return s
}

// missingError stands in for the error of a Failed or Canceled operation
// whose writer recorded none: ARM requires error.code on both. Every
// hcpops writer records one, and ARO-HCP's CancelOperation does; a
// document from an older or foreign writer may not.
func missingError(s arm.ProvisioningState) *arm.CloudErrorBody {
	switch s {
	case arm.ProvisioningStateFailed:
		return &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "The operation failed; no error was recorded."}
	case arm.ProvisioningStateCanceled:
		return &arm.CloudErrorBody{Code: arm.CodeCanceled, Message: "The operation was canceled."}
	}
	return nil
}
