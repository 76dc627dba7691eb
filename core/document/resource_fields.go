package document

import (
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// Envelope members.

func (r *Resource) ID() string           { return r.envelopeString("id") }
func (r *Resource) PartitionKey() string { return r.envelopeString("partitionKey") }
func (r *Resource) ResourceID() string   { return r.envelopeString("resourceID") }
func (r *Resource) ResourceType() string { return r.envelopeString("resourceType") }

// InstanceVersion is properties.cosmosMetadata.instanceVersion (1 for
// legacy documents without one).
func (r *Resource) InstanceVersion() int64 {
	if v, ok := getInt(r.view(), pInstanceVer); ok && v != 0 {
		return v
	}
	return 1
}

// Name and Location are the ARM name and location (external auths have no
// location).
func (r *Resource) Name() string     { return getString(r.view(), pName) }
func (r *Resource) Location() string { return getString(r.view(), pLocation) }

// Tags are the ARM tags; nil when there are none.
func (r *Resource) Tags() map[string]string {
	m, _ := getStringMap(r.view(), pTags)
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
	switch h := r.hotHead(); {
	case h != nil && r.Kind == KindCluster:
		return arm.ProvisioningState(r.sppString(keyProvisioningState))
	case h != nil:
		return arm.ProvisioningState(h.state.value)
	}
	return arm.ProvisioningState(getString(r.view(), r.statePath()))
}

// SetProvisioningState writes the state where this kind keeps it (always
// written, even when empty, as external auths do).
func (r *Resource) SetProvisioningState(s arm.ProvisioningState) {
	set(r.edit(), r.statePath(), string(s))
}

func (r *Resource) ActiveOperationID() string { return r.sppString(keyActiveOperationID) }

// SetActiveOperationID sets activeOperationId; "" removes it (omitempty).
func (r *Resource) SetActiveOperationID(id string) { r.setString(spp(keyActiveOperationID), id) }

// ClusterServiceID is the CS href of the resource; "" if not created yet.
func (r *Resource) ClusterServiceID() string { return r.sppString(keyClusterServiceID) }

// SetClusterServiceID sets clusterServiceID; "" removes it.
func (r *Resource) SetClusterServiceID(href string) { r.setString(spp(keyClusterServiceID), href) }

// PendingClusterServiceID is the CS href chosen before the create POST
// (clusters only).
func (r *Resource) PendingClusterServiceID() string {
	return r.sppString(keyPendingClusterServiceID)
}

// SetPendingClusterServiceID sets pendingClusterServiceID; "" removes it
// and its time. Clusters only.
func (r *Resource) SetPendingClusterServiceID(href string) error {
	if err := r.need(KindCluster, keyPendingClusterServiceID); err != nil {
		return err
	}
	r.setString(spp(keyPendingClusterServiceID), href)
	if _, ok := r.PendingClusterServiceIDTime(); href == "" && ok {
		r.setTime(spp(keyPendingClusterServiceIDTime), time.Time{})
	}
	return nil
}

// PendingClusterServiceIDTime is when hcpops chose the pending ID. It is
// hcpops' own member: ARO-HCP does not write it and may drop it when it
// rewrites the document, so callers need a fallback when it is absent.
// The document's _ts is no substitute: any unrelated write moves it.
func (r *Resource) PendingClusterServiceIDTime() (time.Time, bool) {
	return r.sppTime(keyPendingClusterServiceIDTime)
}

// SetPendingClusterServiceIDTime records when the pending ID was chosen.
// Clusters only.
func (r *Resource) SetPendingClusterServiceIDTime(t time.Time) error {
	if err := r.need(KindCluster, keyPendingClusterServiceIDTime); err != nil {
		return err
	}
	r.setTime(spp(keyPendingClusterServiceIDTime), t)
	return nil
}

// RevokeCredentialsOperationID is set while a credential revocation runs
// (clusters only).
func (r *Resource) RevokeCredentialsOperationID() string {
	return r.sppString(keyRevokeCredentialsOperationID)
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
	return r.sppTime(keyDeletionTimestamp)
}
func (r *Resource) SetDeletionTimestamp(t time.Time) { r.setTime(spp(keyDeletionTimestamp), t) }

// ClusterServiceDeletionTimestamp marks the CS delete as dispatched.
func (r *Resource) ClusterServiceDeletionTimestamp() (time.Time, bool) {
	return r.sppTime(keyClusterServiceDeletionTimestamp)
}
func (r *Resource) SetClusterServiceDeletionTimestamp(t time.Time) {
	r.setTime(spp(keyClusterServiceDeletionTimestamp), t)
}

// CreateOperationCompletionDeadline is when a create must have finished.
func (r *Resource) CreateOperationCompletionDeadline() (time.Time, bool) {
	return r.sppTime(keyCreateOperationCompletionDeadline)
}
func (r *Resource) SetCreateOperationCompletionDeadline(t time.Time) {
	r.setTime(spp(keyCreateOperationCompletionDeadline), t)
}

// DeleteOperationCompletionDeadline is when a delete must have finished.
func (r *Resource) DeleteOperationCompletionDeadline() (time.Time, bool) {
	return r.sppTime(keyDeleteOperationCompletionDeadline)
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
	set(r.edit(), spp(key), v)
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
		unset(r.edit(), path)
		return
	}
	set(r.edit(), path, s)
}

// setTime writes a metav1.Time the way Kubernetes marshals it (UTC, RFC 3339
// to the second); the zero time removes the member.
func (r *Resource) setTime(path []string, t time.Time) {
	if t.IsZero() {
		unset(r.edit(), path)
		return
	}
	set(r.edit(), path, t.UTC().Format(time.RFC3339))
}
