package document

import (
	"encoding/json"
	"encoding/json/jsontext"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
)

// cosmosSystemFields are written by Cosmos DB; they are read but never
// written back.
var cosmosSystemFields = []string{"_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"}

// envelopeNames are the envelope members ParseOperation reads or drops;
// every other one is kept as it is.
var envelopeNames = [...]string{"id", "partitionKey", "resourceID", "resourceType", "_etag", "_ts", "ttl",
	"deletionTimestamp", "properties", "_rid", "_self", "_attachments", "_lsn"}

var envelopeKeys = keysOf(envelopeNames[:]...)

// ParseOperation decodes an operation document as read from the store.
// It refuses documents of another resourceType, unknown request or status
// values and unparsable resource IDs, naming the field and value.
func ParseOperation(raw []byte) (*OperationDocument, error) {
	var vals [len(envelopeNames)]jsontext.Value
	var unknown members
	// properties, when an object, is filed in the same pass: it is most of
	// the document.
	var props operationProperties
	var rd reader
	dec := rd.at(raw, 0)
	err := rd.eachMember(func(name jsontext.Value) error {
		if i, ok := byName(envelopeKeys, name); ok && envelopeNames[i] == "properties" {
			props = operationProperties{object: dec.PeekKind() == '{'} // the last one wins
			if props.object {
				vals[i] = nil
				return rd.eachMember(func(name jsontext.Value) error {
					return rd.file(raw, name, propertyKeys, props.vals[:], &props.unknown)
				})
			}
		}
		return rd.file(raw, name, envelopeKeys, vals[:], &unknown)
	})
	if err == nil {
		err = atEnd(dec)
	}
	if err != nil {
		return nil, notObject("operation document", raw)
	}
	d := &OperationDocument{unknown: unknown}
	val := func(key string) jsontext.Value { return vals[envelopeKeys[key]] }
	var tsNum json.Number
	for _, f := range []struct {
		key string
		dst any
	}{
		{"id", &d.ID}, {"partitionKey", &d.PartitionKey}, {"resourceID", &d.ResourceID},
		{"resourceType", &d.ResourceType}, {"_etag", &d.ETag}, {"_ts", &tsNum},
	} {
		if err := takeValue("", f.key, val(f.key), f.dst); err != nil {
			return nil, err
		}
	}
	if tsNum != "" {
		var err error
		if d.Timestamp, err = tsNum.Int64(); err != nil {
			return nil, fmt.Errorf("_ts: %q is not an integer", tsNum)
		}
	}
	if k := kindOfType(d.ResourceType); k != KindOperation {
		return nil, fmt.Errorf("resourceType: %q is not %s", d.ResourceType, arm.OperationResourceType)
	}
	if err := takeValue("", "ttl", val("ttl"), &d.TTL); err != nil {
		return nil, err
	}
	if err := takeValue("", "deletionTimestamp", val("deletionTimestamp"), &d.DeletionTimestamp); err != nil {
		return nil, err
	}
	if !props.object {
		p := val("properties")
		if len(p) == 0 || string(p) == "null" {
			return nil, fmt.Errorf("properties: missing")
		}
		if err := rd.readMembers("properties", p, propertyKeys, props.vals[:], &props.unknown); err != nil {
			return nil, err
		}
	}
	if err := d.Properties.decode(&rd, &props); err != nil {
		return nil, err
	}
	d.fillMetadata()
	return d, nil
}

// fillMetadata completes cosmosMetadata from the envelope as read.
func (d *OperationDocument) fillMetadata() {
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
}

// Replaced returns the document the store holds once a Replace (or batch
// step) with d.MarshalReplace()'s rendering has succeeded and answered
// stored: what ParseOperation(stored) reads, rendering the same bytes, but
// only stored's _etag and _ts are decoded. A poll that has just written a
// status need not parse what it wrote. The receiver is not modified.
func (d *OperationDocument) Replaced(stored []byte) (*OperationDocument, error) {
	var vals [2]jsontext.Value
	var rd reader
	if err := rd.readMembers("stored operation document", stored, storedKeys, vals[:], nil); err != nil {
		return nil, err
	}
	etag, ts := vals[storedKeys["_etag"]], vals[storedKeys["_ts"]]
	c := d.Clone()
	c.ETag, c.Timestamp = "", 0
	var tsNum json.Number
	if err := takeValue("", "_etag", etag, &c.ETag); err != nil {
		return nil, err
	}
	if err := takeValue("", "_ts", ts, &tsNum); err != nil {
		return nil, err
	}
	if tsNum != "" {
		var err error
		if c.Timestamp, err = tsNum.Int64(); err != nil {
			return nil, fmt.Errorf("_ts: %q is not an integer", tsNum)
		}
	}
	c.TTL = OperationTTL
	cm := &c.Properties.CosmosMetadata
	cm.InstanceVersion++
	cm.ETag = d.ETag // as MarshalReplace wrote it; fillMetadata puts _etag over it
	c.fillMetadata()
	return c, nil
}

var storedKeys = keysOf("_etag", "_ts")

// propertyNames are the properties members Operation models.
var propertyNames = [...]string{"cosmosMetadata", "tenantId", "clientId", "request", "externalId", "internalId",
	"operationId", "clientRequestId", "correlationRequestId", "notificationUri", "startTime", "lastTransitionTime",
	"status", "error", "usesNewNodePoolDeletionApproach", "usesNewExternalAuthDeletionApproach",
	"usesNewClusterDeletionApproach", "systemAdminCredentialRequest", "systemAdminCredentialRevocation"}

var propertyKeys = keysOf(propertyNames[:]...)

// operationProperties are the members of properties as filed.
type operationProperties struct {
	object  bool // filed while the envelope was read
	vals    [len(propertyNames)]jsontext.Value
	unknown members
}

func (o *Operation) decode(rd *reader, p *operationProperties) error {
	vals := &p.vals
	o.unknown = p.unknown
	if cm := vals[propertyKeys["cosmosMetadata"]]; !rd.decodeCosmosMetadata(&o.CosmosMetadata, cm) {
		if err := takeValue("properties.", "cosmosMetadata", cm, &o.CosmosMetadata); err != nil {
			return err
		}
	}
	var request, status string
	for _, f := range []struct {
		key string
		dst any
	}{
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
		if err := takeValue("properties.", f.key, vals[propertyKeys[f.key]], f.dst); err != nil {
			return err
		}
	}
	var err error
	if o.Request, err = ParseRequest(request); err != nil {
		return fmt.Errorf("properties.%w", err)
	}
	if o.Status, err = parseProvisioningState("properties.status", status); err != nil {
		return err
	}
	if o.ExternalID != "" {
		if err := checkResourceID("properties.externalId", o.ExternalID); err != nil {
			return err
		}
	}
	if o.OperationID != "" {
		if err := checkResourceID("properties.operationId", o.OperationID); err != nil {
			return err
		}
	}
	return nil
}

// decodeCosmosMetadata decodes a cosmosMetadata holding only its own keys,
// spelled exactly (as every writer spells them); anything else is left to
// encoding/json (false), whose case-insensitive matching and error
// messages this does not repeat.
func (rd *reader) decodeCosmosMetadata(c *CosmosMetadata, raw jsontext.Value) bool {
	if len(raw) == 0 || raw.Kind() != '{' {
		return false
	}
	var v CosmosMetadata
	dec := rd.at(raw, 0)
	err := rd.eachMember(func(name jsontext.Value) error {
		var dst any
		switch string(name) { // exact spellings only, quotes included
		case `"resourceID"`:
			dst = &v.ResourceID
		case `"etag"`:
			dst = &v.ETag
		case `"instanceVersion"`:
			dst = &v.InstanceVersion
		case `"partitionKey"`:
			dst = &v.PartitionKey
		default:
			return errNotObject // not spelled as this decodes it
		}
		val, err := dec.ReadValue()
		if err == nil && string(val) != "null" {
			err = decodeValue(val, dst)
		}
		return err
	})
	if err != nil {
		return false
	}
	*c = v
	return true
}

// Marshal renders the document exactly as it stands (no version bump, no
// TTL stamp); MarshalCreate and MarshalReplace are what writes use.
func (d *OperationDocument) Marshal() ([]byte, error) {
	w := newWriter(2048) // operation documents are under 2 KB
	w.putString("id", d.ID)
	if d.TTL != 0 {
		w.putInt("ttl", int64(d.TTL))
	}
	w.putString("partitionKey", d.PartitionKey)
	w.putString("resourceID", d.ResourceID)
	w.putString("resourceType", d.ResourceType)
	if d.DeletionTimestamp != nil {
		w.putTime("deletionTimestamp", *d.DeletionTimestamp)
	}
	w.begin("properties")
	d.Properties.render(w)
	w.end()
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

// render writes the properties in ARO-HCP's marshal order, unknown
// members last.
func (o *Operation) render(w *writer) {
	w.begin("cosmosMetadata") // encoding/json's rendering of the CosmosMetadata struct
	w.putString("resourceID", o.CosmosMetadata.ResourceID)
	if o.CosmosMetadata.ETag != "" {
		w.putString("etag", o.CosmosMetadata.ETag)
	}
	w.putInt("instanceVersion", o.CosmosMetadata.InstanceVersion)
	w.putString("partitionKey", o.CosmosMetadata.PartitionKey)
	w.end()
	for _, f := range []struct{ key, value string }{
		{"tenantId", o.TenantID}, {"clientId", o.ClientID}, {"request", string(o.Request)}, {"externalId", o.ExternalID},
	} {
		if f.value != "" {
			w.putString(f.key, f.value)
		}
	}
	w.putString("internalId", o.InternalID) // a struct in ARO-HCP: always written
	for _, f := range []struct{ key, value string }{
		{"operationId", o.OperationID}, {"clientRequestId", o.ClientRequestID},
		{"correlationRequestId", o.CorrelationRequestID}, {"notificationUri", o.NotificationURI},
	} {
		if f.value != "" {
			w.putString(f.key, f.value)
		}
	}
	w.putTime("startTime", o.StartTime)
	w.putTime("lastTransitionTime", o.LastTransitionTime)
	if o.Status != "" {
		w.putString("status", string(o.Status))
	}
	if o.Error != nil {
		w.put("error", o.Error)
	}
	w.putBool("usesNewNodePoolDeletionApproach", o.UsesNewNodePoolDeletionApproach)
	w.putBool("usesNewExternalAuthDeletionApproach", o.UsesNewExternalAuthDeletionApproach)
	w.putBool("usesNewClusterDeletionApproach", o.UsesNewClusterDeletionApproach)
	if o.SystemAdminCredentialRequest != nil {
		w.put("systemAdminCredentialRequest", o.SystemAdminCredentialRequest)
	}
	if o.SystemAdminCredentialRevocation != nil {
		w.put("systemAdminCredentialRevocation", o.SystemAdminCredentialRevocation)
	}
	w.rest(o.unknown)
}
