// Package arm holds the Azure Resource Manager vocabulary the operation
// lifecycle speaks: provisioning states, cloud errors and the body ARM reads
// from an operation-status endpoint.
package arm

import (
	"encoding/json"
	"log/slog"
	"time"
)

// Names ARO-HCP registers under its resource provider namespace.
const (
	ProviderNamespace        = "Microsoft.RedHatOpenShift"
	OperationStatusesType    = "hcpOperationStatuses"
	OperationResultsType     = "hcpOperationResults"
	ClustersType             = "hcpOpenShiftClusters"
	NodePoolsType            = "nodePools"
	ExternalAuthsType        = "externalAuths"
	ClusterResourceType      = ProviderNamespace + "/" + ClustersType
	NodePoolResourceType     = ClusterResourceType + "/" + NodePoolsType
	ExternalAuthResourceType = ClusterResourceType + "/" + ExternalAuthsType
	OperationResourceType    = ProviderNamespace + "/" + OperationStatusesType
)

// ProvisioningState is the ARM provisioning state of a resource or operation.
type ProvisioningState string

const (
	ProvisioningStateAccepted       ProvisioningState = "Accepted"
	ProvisioningStateProvisioning   ProvisioningState = "Provisioning"
	ProvisioningStateUpdating       ProvisioningState = "Updating"
	ProvisioningStateDeleting       ProvisioningState = "Deleting"
	ProvisioningStateAwaitingSecret ProvisioningState = "AwaitingSecret"
	ProvisioningStateSucceeded      ProvisioningState = "Succeeded"
	ProvisioningStateFailed         ProvisioningState = "Failed"
	ProvisioningStateCanceled       ProvisioningState = "Canceled"
)

// IsTerminal reports whether ARM stops polling once it sees this state.
func (s ProvisioningState) IsTerminal() bool {
	switch s {
	case ProvisioningStateSucceeded, ProvisioningStateFailed, ProvisioningStateCanceled:
		return true
	}
	return false
}

// TerminalStates lists the terminal states in the order ARO-HCP's query uses.
var TerminalStates = []ProvisioningState{ProvisioningStateSucceeded, ProvisioningStateFailed, ProvisioningStateCanceled}

// Error codes written on operations.
const (
	CodeInternalServerError    = "InternalServerError"
	CodeCanceled               = "Canceled"
	CodeMultipleErrorsOccurred = "MultipleErrorsOccurred"
	CodeInvalidRequestContent  = "InvalidRequestContent"
	CodeResourceNotFound       = "ResourceNotFound"
	CodeConflict               = "Conflict"
	// Request gating (ARO-HCP's api-version and subscription middleware).
	CodeInvalidParameter         = "InvalidParameter"
	CodeInvalidResourceType      = "InvalidResourceType"
	CodeInvalidSubscriptionState = "InvalidSubscriptionState"
)

// AdminCredential is the body of a RequestCredential operation's result:
// a cluster-admin kubeconfig and when it stops working. Kubeconfig is a
// secret; nothing stores or logs it.
type AdminCredential struct {
	ExpirationTimestamp time.Time
	Kubeconfig          string
}

// MarshalJSON writes the body as ARO-HCP's versioned API does: an empty
// member (a revoked credential's kubeconfig, a zero timestamp) is left
// out, not written as "" or year 1.
func (c AdminCredential) MarshalJSON() ([]byte, error) {
	var body struct {
		ExpirationTimestamp *time.Time `json:"expirationTimestamp,omitempty"`
		Kubeconfig          string     `json:"kubeconfig,omitempty"`
	}
	if !c.ExpirationTimestamp.IsZero() {
		body.ExpirationTimestamp = &c.ExpirationTimestamp
	}
	body.Kubeconfig = c.Kubeconfig
	return json.Marshal(body)
}

// LogValue keeps the kubeconfig out of slog lines.
func (c AdminCredential) LogValue() slog.Value {
	return slog.GroupValue(slog.Time("expirationTimestamp", c.ExpirationTimestamp))
}

// CloudErrorBody is ARM's error shape; Details nests recursively.
type CloudErrorBody struct {
	Code    string           `json:"code,omitempty"`
	Message string           `json:"message,omitempty"`
	Target  string           `json:"target,omitempty"`
	Details []CloudErrorBody `json:"details,omitempty"`
}

// Equal compares two errors by value, so an unchanged error read back from
// Cosmos does not count as a change (ARO-HCP compares pointers and rewrites).
func (e *CloudErrorBody) Equal(o *CloudErrorBody) bool {
	if e == nil || o == nil {
		return e == o
	}
	if e.Code != o.Code || e.Message != o.Message || e.Target != o.Target || len(e.Details) != len(o.Details) {
		return false
	}
	for i := range e.Details {
		if !e.Details[i].Equal(&o.Details[i]) {
			return false
		}
	}
	return true
}

// OperationStatus is the body of GET .../hcpOperationStatuses/{id} and of the
// async notification POST.
type OperationStatus struct {
	ID        string            `json:"id,omitempty"`
	Name      string            `json:"name,omitempty"`
	Status    ProvisioningState `json:"status"`
	StartTime *time.Time        `json:"startTime,omitempty"`
	EndTime   *time.Time        `json:"endTime,omitempty"`
	Error     *CloudErrorBody   `json:"error,omitempty"`
}

// MarshalIndent renders the body the way ARO-HCP does (4-space indent).
func (s OperationStatus) MarshalIndent() ([]byte, error) {
	return json.MarshalIndent(s, "", "    ")
}
