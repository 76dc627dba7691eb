package document

import (
	"encoding/json"
	"encoding/json/jsontext"
	"fmt"
	"maps"
	"slices"

	"github.com/hcpops/hcpops/core/arm"
)

// Operation flags in a projection.
const (
	opHasDeletion = 1 << iota
	opHasError
	opHasCredRequest
	opHasCredRevocation
	opNewNodePool
	opNewExternalAuth
	opNewCluster
	opTargetInPartition // TargetDocument's id follows the target kind
	// cosmosMetadata's resourceID and partitionKey are the envelope's, as
	// ARO-HCP writes them: each kept once, which spares a tick unpacking
	// them twice an operation.
	opSameCMResourceID
	opSameCMPartitionKey
)

// AppendProjection appends d's projection to dst. It is lossless: the
// document it gives back renders as d does.
func (d *OperationDocument) AppendProjection(dst []byte) []byte {
	w := projWriter{b: dst}
	p := &d.Properties
	var flags uint64
	for _, f := range []struct {
		on  bool
		bit uint64
	}{
		{d.DeletionTimestamp != nil, opHasDeletion}, {p.Error != nil, opHasError},
		{p.SystemAdminCredentialRequest != nil, opHasCredRequest},
		{p.SystemAdminCredentialRevocation != nil, opHasCredRevocation},
		{p.UsesNewNodePoolDeletionApproach, opNewNodePool},
		{p.UsesNewExternalAuthDeletionApproach, opNewExternalAuth},
		{p.UsesNewClusterDeletionApproach, opNewCluster},
		{d.TargetInPartition(), opTargetInPartition},
		{p.CosmosMetadata.ResourceID == d.ResourceID, opSameCMResourceID},
		{p.CosmosMetadata.PartitionKey == d.PartitionKey, opSameCMPartitionKey},
	} {
		if f.on {
			flags |= f.bit
		}
	}
	w.uvarint(flags)
	for i, s := range []string{d.ID, d.PartitionKey, d.ResourceID, d.ResourceType, d.ETag,
		p.CosmosMetadata.ResourceID, p.CosmosMetadata.ETag, p.CosmosMetadata.PartitionKey,
		p.TenantID, p.ClientID, string(p.Request), p.ExternalID, p.InternalID, p.OperationID,
		p.ClientRequestID, p.CorrelationRequestID, p.NotificationURI, string(p.Status)} {
		if i == 5 && flags&opSameCMResourceID != 0 || i == 7 && flags&opSameCMPartitionKey != 0 {
			continue
		}
		w.str(s)
	}
	w.varint(int64(d.TTL))
	w.varint(d.Timestamp)
	w.varint(p.CosmosMetadata.InstanceVersion)
	w.time(p.StartTime)
	w.time(p.LastTransitionTime)
	if d.DeletionTimestamp != nil {
		w.time(*d.DeletionTimestamp)
	}
	if p.Error != nil {
		raw, _ := json.Marshal(p.Error) // a struct of strings and its own kind: cannot fail
		w.str(string(raw))
	}
	if c := p.SystemAdminCredentialRequest; c != nil {
		w.str(c.CertificateSigningRequest)
		w.str(c.SystemAdminCredentialRequestResourceID)
	}
	if c := p.SystemAdminCredentialRevocation; c != nil {
		w.str(c.SystemAdminCredentialRevocationResourceID)
	}
	w.unknown(d.unknown)
	w.unknown(p.unknown)
	var target byte // 0: none; else the kind + 1
	if k, err := d.TargetKind(); err == nil {
		target = byte(k) + 1
	}
	w.b = append(w.b, target)
	if flags&opTargetInPartition != 0 {
		w.str(d.TargetDocument())
	}
	return w.end()
}

func (w *projWriter) unknown(m members) {
	w.uvarint(uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.str(k)
		w.str(string(m[k]))
	}
}

func (r *projReader) unknown() members {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.text)) {
		return nil
	}
	m := make(members, n)
	for range n {
		k := r.str()
		m[k] = jsontext.Value(r.str())
	}
	return m
}

// OperationFromProjection is the operation a projection holds.
func OperationFromProjection(b []byte) (*OperationDocument, error) {
	return operationFrom(newProjReader(b).ended())
}

// OperationFromOwnedProjection is OperationFromProjection without a copy
// of b: the operation's strings are b's bytes, so b must never change
// after (the caller gives it away).
func OperationFromOwnedProjection(b []byte) (*OperationDocument, error) {
	return operationFrom(ownedProjReader(b).ended())
}

func operationFrom(rd *projReader) (*OperationDocument, error) {
	d := &OperationDocument{}
	p := &d.Properties
	flags := rd.uvarint()
	var request, status string
	for i, s := range []*string{&d.ID, &d.PartitionKey, &d.ResourceID, &d.ResourceType, &d.ETag,
		&p.CosmosMetadata.ResourceID, &p.CosmosMetadata.ETag, &p.CosmosMetadata.PartitionKey,
		&p.TenantID, &p.ClientID, &request, &p.ExternalID, &p.InternalID, &p.OperationID,
		&p.ClientRequestID, &p.CorrelationRequestID, &p.NotificationURI, &status} {
		switch {
		case i == 5 && flags&opSameCMResourceID != 0:
			*s = d.ResourceID
		case i == 7 && flags&opSameCMPartitionKey != 0:
			*s = d.PartitionKey
		default:
			*s = rd.str()
		}
	}
	p.Request, p.Status = Request(request), arm.ProvisioningState(status)
	d.TTL = int(rd.varint())
	d.Timestamp = rd.varint()
	p.CosmosMetadata.InstanceVersion = rd.varint()
	p.StartTime = rd.time()
	p.LastTransitionTime = rd.time()
	if flags&opHasDeletion != 0 {
		t := rd.time()
		d.DeletionTimestamp = &t
	}
	if flags&opHasError != 0 {
		p.Error = &arm.CloudErrorBody{}
		if err := json.Unmarshal([]byte(rd.str()), p.Error); err != nil {
			rd.fail()
		}
	}
	if flags&opHasCredRequest != 0 {
		p.SystemAdminCredentialRequest = &SystemAdminCredentialRequest{
			CertificateSigningRequest: rd.str(), SystemAdminCredentialRequestResourceID: rd.str()}
	}
	if flags&opHasCredRevocation != 0 {
		p.SystemAdminCredentialRevocation = &SystemAdminCredentialRevocation{SystemAdminCredentialRevocationResourceID: rd.str()}
	}
	p.UsesNewNodePoolDeletionApproach = flags&opNewNodePool != 0
	p.UsesNewExternalAuthDeletionApproach = flags&opNewExternalAuth != 0
	p.UsesNewClusterDeletionApproach = flags&opNewCluster != 0
	d.unknown = rd.unknown()
	p.unknown = rd.unknown()
	if target := rd.byte(); target > 0 && p.ExternalID != "" {
		d.targetKind, d.targetOf = Kind(target-1), p.ExternalID
	}
	d.target = targetDoc{in: d.PartitionKey, ok: flags&opTargetInPartition != 0, set: true}
	if d.target.ok {
		d.target.id = rd.str()
	}
	if rd.err != nil || rd.i != len(rd.text) {
		return nil, fmt.Errorf("operation projection: %w", errProjection)
	}
	return d, nil
}
