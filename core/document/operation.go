package document

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

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
}

// cosmosSystemFields are written by Cosmos DB; they are read but never
// written back.
var cosmosSystemFields = []string{"_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"}

// readEnvelope takes the envelope members shared by every document type.
func readEnvelope(m members) (id, pk, resourceID, resourceType, etag string, ts int64, err error) {
	for _, f := range []struct {
		key string
		dst any
	}{
		{"id", &id}, {"partitionKey", &pk}, {"resourceID", &resourceID}, {"resourceType", &resourceType},
		{"_etag", &etag},
	} {
		if err = m.take(f.key, f.key, f.dst); err != nil {
			return
		}
	}
	var tsNum json.Number
	if err = m.take("_ts", "_ts", &tsNum); err != nil {
		return
	}
	if tsNum != "" {
		if ts, err = tsNum.Int64(); err != nil {
			err = fmt.Errorf("_ts: %q is not an integer", tsNum)
			return
		}
	}
	for _, k := range cosmosSystemFields {
		delete(m, k)
	}
	return
}

// ParseOperation decodes an operation document as read from the store.
// It refuses documents of another resourceType, unknown request or status
// values and unparsable resource IDs, naming the field and value.
func ParseOperation(raw []byte) (*OperationDocument, error) {
	m, err := decodeObject("operation document", raw)
	if err != nil {
		return nil, err
	}
	d := &OperationDocument{}
	if d.ID, d.PartitionKey, d.ResourceID, d.ResourceType, d.ETag, d.Timestamp, err = readEnvelope(m); err != nil {
		return nil, err
	}
	if k := kindOfType(d.ResourceType); k != KindOperation {
		return nil, fmt.Errorf("resourceType: %q is not %s", d.ResourceType, arm.OperationResourceType)
	}
	if err := m.take("ttl", "ttl", &d.TTL); err != nil {
		return nil, err
	}
	if err := m.take("deletionTimestamp", "deletionTimestamp", &d.DeletionTimestamp); err != nil {
		return nil, err
	}
	props, ok := m["properties"]
	if !ok || string(props) == "null" {
		return nil, fmt.Errorf("properties: missing")
	}
	delete(m, "properties")
	if err := d.Properties.decode(props); err != nil {
		return nil, err
	}
	d.unknown = m

	cm := &d.Properties.CosmosMetadata
	if cm.ResourceID == "" {
		cm.ResourceID = d.ResourceID
	}
	if cm.PartitionKey == "" {
		cm.PartitionKey = d.PartitionKey
	}
	if cm.InstanceVersion == 0 {
		cm.InstanceVersion = 1 // legacy documents predate instanceVersion
	}
	if d.ETag != "" {
		cm.ETag = d.ETag
	}
	return d, nil
}

func (o *Operation) decode(raw []byte) error {
	m, err := decodeObject("properties", raw)
	if err != nil {
		return err
	}
	var request, status string
	for _, f := range []struct {
		key string
		dst any
	}{
		{"cosmosMetadata", &o.CosmosMetadata},
		{"tenantId", &o.TenantID},
		{"clientId", &o.ClientID},
		{"request", &request},
		{"externalId", &o.ExternalID},
		{"internalId", &o.InternalID},
		{"operationId", &o.OperationID},
		{"clientRequestId", &o.ClientRequestID},
		{"correlationRequestId", &o.CorrelationRequestID},
		{"notificationUri", &o.NotificationURI},
		{"startTime", &o.StartTime},
		{"lastTransitionTime", &o.LastTransitionTime},
		{"status", &status},
		{"error", &o.Error},
		{"usesNewNodePoolDeletionApproach", &o.UsesNewNodePoolDeletionApproach},
		{"usesNewExternalAuthDeletionApproach", &o.UsesNewExternalAuthDeletionApproach},
		{"usesNewClusterDeletionApproach", &o.UsesNewClusterDeletionApproach},
		{"systemAdminCredentialRequest", &o.SystemAdminCredentialRequest},
		{"systemAdminCredentialRevocation", &o.SystemAdminCredentialRevocation},
	} {
		if err := m.take(f.key, "properties."+f.key, f.dst); err != nil {
			return err
		}
	}
	if o.Request, err = ParseRequest(request); err != nil {
		return fmt.Errorf("properties.%w", err)
	}
	if o.Status, err = parseProvisioningState("properties.status", status); err != nil {
		return err
	}
	if o.ExternalID != "" {
		if _, err := ParseResourceID("properties.externalId", o.ExternalID); err != nil {
			return err
		}
	}
	if o.OperationID != "" {
		if _, err := ParseResourceID("properties.operationId", o.OperationID); err != nil {
			return err
		}
	}
	o.unknown = m
	return nil
}

// Marshal renders the document exactly as it stands (no version bump, no
// TTL stamp); MarshalCreate and MarshalReplace are what writes use.
func (d *OperationDocument) Marshal() ([]byte, error) {
	props, err := d.Properties.marshal()
	if err != nil {
		return nil, err
	}
	var w objectWriter
	w.put("id", d.ID)
	if d.TTL != 0 {
		w.put("ttl", d.TTL)
	}
	w.put("partitionKey", d.PartitionKey)
	w.put("resourceID", d.ResourceID)
	w.put("resourceType", d.ResourceType)
	if d.DeletionTimestamp != nil {
		w.put("deletionTimestamp", d.DeletionTimestamp)
	}
	w.putRaw("properties", props)
	w.rest(d.unknown)
	return w.bytes()
}

// MarshalCreate renders the document for a store Create: instanceVersion 1,
// no etag, TTL stamped. The receiver is not modified.
func (d *OperationDocument) MarshalCreate() ([]byte, error) {
	if err := d.checkKeys(); err != nil {
		return nil, err
	}
	c := *d
	c.TTL = OperationTTL
	c.Properties.CosmosMetadata.InstanceVersion = 1
	c.Properties.CosmosMetadata.ETag = ""
	return c.Marshal()
}

// MarshalReplace renders the document for a store Replace of the version
// that was read: instanceVersion+1, TTL re-stamped, and (as ARO-HCP does)
// the etag it was read with in cosmosMetadata. Send d.ETag as If-Match. A
// document without an etag cannot be replaced. The receiver is not modified.
func (d *OperationDocument) MarshalReplace() ([]byte, error) {
	if d.ETag == "" {
		return nil, fmt.Errorf("operation %s: replace needs the etag it was read with", d.ID)
	}
	if err := d.checkKeys(); err != nil {
		return nil, err
	}
	c := *d
	c.TTL = OperationTTL
	c.Properties.CosmosMetadata.InstanceVersion++
	c.Properties.CosmosMetadata.ETag = d.ETag
	return c.Marshal()
}

// checkKeys refuses to write a document Cosmos would file wrongly: ARO-HCP's
// serializer rejects an empty or upper-case partition key.
func (d *OperationDocument) checkKeys() error {
	if d.ID == "" {
		return fmt.Errorf("id: missing")
	}
	if d.PartitionKey == "" || d.PartitionKey != strings.ToLower(d.PartitionKey) {
		return fmt.Errorf("partitionKey: %q must be a non-empty lower-case subscription ID", d.PartitionKey)
	}
	return nil
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

func (o *Operation) marshal() ([]byte, error) {
	var w objectWriter
	w.put("cosmosMetadata", o.CosmosMetadata)
	if o.TenantID != "" {
		w.put("tenantId", o.TenantID)
	}
	if o.ClientID != "" {
		w.put("clientId", o.ClientID)
	}
	if o.Request != "" {
		w.put("request", o.Request)
	}
	if o.ExternalID != "" {
		w.put("externalId", o.ExternalID)
	}
	w.put("internalId", o.InternalID) // a struct in ARO-HCP: always written
	if o.OperationID != "" {
		w.put("operationId", o.OperationID)
	}
	if o.ClientRequestID != "" {
		w.put("clientRequestId", o.ClientRequestID)
	}
	if o.CorrelationRequestID != "" {
		w.put("correlationRequestId", o.CorrelationRequestID)
	}
	if o.NotificationURI != "" {
		w.put("notificationUri", o.NotificationURI)
	}
	w.put("startTime", o.StartTime)
	w.put("lastTransitionTime", o.LastTransitionTime)
	if o.Status != "" {
		w.put("status", o.Status)
	}
	if o.Error != nil {
		w.put("error", o.Error)
	}
	w.put("usesNewNodePoolDeletionApproach", o.UsesNewNodePoolDeletionApproach)
	w.put("usesNewExternalAuthDeletionApproach", o.UsesNewExternalAuthDeletionApproach)
	w.put("usesNewClusterDeletionApproach", o.UsesNewClusterDeletionApproach)
	if o.SystemAdminCredentialRequest != nil {
		w.put("systemAdminCredentialRequest", o.SystemAdminCredentialRequest)
	}
	if o.SystemAdminCredentialRevocation != nil {
		w.put("systemAdminCredentialRevocation", o.SystemAdminCredentialRevocation)
	}
	w.rest(o.unknown)
	return w.bytes()
}

// Clone returns a deep copy, safe to modify.
func (d *OperationDocument) Clone() *OperationDocument {
	c := *d
	if d.DeletionTimestamp != nil {
		t := *d.DeletionTimestamp
		c.DeletionTimestamp = &t
	}
	c.unknown = d.unknown.clone()
	c.Properties.unknown = d.Properties.unknown.clone()
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
	k, _, err := ResourceKindOfID("properties.externalId", d.Properties.ExternalID)
	return k, err
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
	return s
}

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
// usesNew* deletion flags set, for a Delete), operationId with the location,
// the location-less resource ID hashed into the document id. Render it with
// MarshalCreate.
func NewOperation(p NewOperationParams) (*OperationDocument, error) {
	req, err := ParseRequest(string(p.Request))
	if err != nil {
		return nil, err
	}
	if _, _, err := ResourceKindOfID("externalId", p.ExternalID); err != nil {
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
		d.Properties.UsesNewNodePoolDeletionApproach = true
		d.Properties.UsesNewExternalAuthDeletionApproach = true
		d.Properties.UsesNewClusterDeletionApproach = true
	}
	return d, nil
}
