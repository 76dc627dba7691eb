package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// parseOperationReference is ParseOperation done the plain way:
// encoding/json for the document, each level and each member, and the
// Azure SDK for the IDs. The fuzz test below holds ParseOperation to it.
func parseOperationReference(raw []byte) (*OperationDocument, error) {
	m, err := refObject("operation document", raw)
	if err != nil {
		return nil, err
	}
	d := &OperationDocument{}
	var tsNum json.Number
	for _, f := range []struct {
		key string
		dst any
	}{
		{"id", &d.ID}, {"partitionKey", &d.PartitionKey}, {"resourceID", &d.ResourceID},
		{"resourceType", &d.ResourceType}, {"_etag", &d.ETag}, {"_ts", &tsNum},
	} {
		if err := refTake(m, "", f.key, f.dst); err != nil {
			return nil, err
		}
	}
	if tsNum != "" {
		if d.Timestamp, err = tsNum.Int64(); err != nil {
			return nil, fmt.Errorf("_ts: %q is not an integer", tsNum)
		}
	}
	for _, k := range cosmosSystemFields {
		delete(m, k)
	}
	if k := kindOfType(d.ResourceType); k != KindOperation {
		return nil, fmt.Errorf("resourceType: %q is not %s", d.ResourceType, arm.OperationResourceType)
	}
	if err := refTake(m, "", "ttl", &d.TTL); err != nil {
		return nil, err
	}
	if err := refTake(m, "", "deletionTimestamp", &d.DeletionTimestamp); err != nil {
		return nil, err
	}
	props, ok := m["properties"]
	if !ok || string(props) == "null" {
		return nil, fmt.Errorf("properties: missing")
	}
	delete(m, "properties")
	o := &d.Properties
	pm, err := refObject("properties", props)
	if err != nil {
		return nil, err
	}
	var request, status string
	for _, f := range []struct {
		key string
		dst any
	}{
		{"cosmosMetadata", &o.CosmosMetadata}, {"tenantId", &o.TenantID}, {"clientId", &o.ClientID},
		{"request", &request}, {"externalId", &o.ExternalID}, {"internalId", &o.InternalID},
		{"operationId", &o.OperationID}, {"clientRequestId", &o.ClientRequestID},
		{"correlationRequestId", &o.CorrelationRequestID}, {"notificationUri", &o.NotificationURI},
		{"startTime", &o.StartTime}, {"lastTransitionTime", &o.LastTransitionTime}, {"status", &status},
		{"error", &o.Error}, {"usesNewNodePoolDeletionApproach", &o.UsesNewNodePoolDeletionApproach},
		{"usesNewExternalAuthDeletionApproach", &o.UsesNewExternalAuthDeletionApproach},
		{"usesNewClusterDeletionApproach", &o.UsesNewClusterDeletionApproach},
		{"systemAdminCredentialRequest", &o.SystemAdminCredentialRequest},
		{"systemAdminCredentialRevocation", &o.SystemAdminCredentialRevocation},
	} {
		if err := refTake(pm, "properties.", f.key, f.dst); err != nil {
			return nil, err
		}
	}
	if o.Request, err = ParseRequest(request); err != nil {
		return nil, fmt.Errorf("properties.%w", err)
	}
	if o.Status, err = parseProvisioningState("properties.status", status); err != nil {
		return nil, err
	}
	for _, id := range []struct{ field, value string }{
		{"properties.externalId", o.ExternalID}, {"properties.operationId", o.OperationID},
	} {
		if id.value != "" {
			if _, err := ParseResourceID(id.field, id.value); err != nil {
				return nil, err
			}
		}
	}
	// An object without unknown members keeps none (nil), as ParseOperation does.
	for _, u := range []*members{&pm, &m} {
		if len(*u) == 0 {
			*u = nil
		}
	}
	o.unknown, d.unknown = pm, m
	cm := &o.CosmosMetadata
	if cm.ResourceID == "" {
		cm.ResourceID = d.ResourceID
	}
	if cm.PartitionKey == "" {
		cm.PartitionKey = d.PartitionKey
	}
	if cm.InstanceVersion == 0 {
		cm.InstanceVersion = 1
	}
	if d.ETag != "" {
		cm.ETag = d.ETag
	}
	return d, nil
}

func refObject(what string, raw []byte) (members, error) {
	var m members
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", what, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: is null, want a JSON object", what)
	}
	return m, nil
}

func refTake(m members, prefix, key string, v any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	if string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s%s: %s cannot be decoded: %w", prefix, key, clip(raw), err)
	}
	return nil
}

var operationSeeds = []string{
	`{"id":"a","id":"b","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted",
	  "cosmosMetadata":{"ResourceID":"upper","etag":"\"e\"","instanceVersion":2},"x":1,"x":[2]},"_ts":"12","ttl":-0}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Delete","status":"Deleting",
	  "cosmosMetadata":{"instanceVersion":"2"}}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Delete","status":"Deleting",
	  "cosmosMetadata":{"instanceVersion":1.5}}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted",
	  "startTime":"2026-01-01T00:00:00\u005a","usesNewClusterDeletionApproach":1,"cosmosMetadata":null}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","ttl":1e3,"properties":{"request":"Create","status":"Accepted"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","_ts":1.5,"properties":{"request":"Create","status":"Accepted"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","deletionTimestamp":{},"properties":{"request":"Create","status":"Accepted"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Cre\u0061te","status":"Accepted","tenantId":"t\u00e9\n",
	  "externalId":"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/","operationId":" /x"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":"x"}`,
	// A repeated properties: the last one wins, object or not.
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted"},"properties":"x"}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":"x","properties":{"request":"Create","status":"Accepted"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted"},"properties":null}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted","x":1},
	  "properties":{"request":"Delete","status":"Deleting"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","prop\u0065rties":{"request":"Create","status":"Accepted"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"request":"Create","status":"Accepted"},"properties":{`,
}

// FuzzParseOperationReference: ParseOperation accepts and refuses exactly
// what the encoding/json and SDK version did, with the same error, and
// reads the same document.
func FuzzParseOperationReference(f *testing.F) {
	for _, s := range operationSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	for _, seed := range corpus(f, "FuzzParseOperationDocument") {
		f.Add(seed)
	}
	f.Fuzz(checkOperationReference)
}

func TestParseOperationAgreesWithReference(t *testing.T) {
	for _, s := range operationSeeds {
		checkOperationReference(t, []byte(s))
	}
	for _, name := range fuzzSeedFiles {
		checkOperationReference(t, readTestdata(t, name))
	}
}

func checkOperationReference(t *testing.T, raw []byte) {
	t.Helper()
	got, err := ParseOperation(raw)
	want, werr := parseOperationReference(raw)
	if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
		t.Fatalf("ParseOperation = %v; reference = %v\n%.300q", err, werr, raw)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("documents differ\n got %+v\nwant %+v", got, want)
	}
}

// marshalReference renders d as Marshal did before its direct writers:
// encoding/json for every member.
func marshalReference(d *OperationDocument) ([]byte, error) {
	o := &d.Properties
	var p refWriter
	p.put("cosmosMetadata", o.CosmosMetadata)
	for _, f := range []struct {
		key   string
		value any
		skip  bool
	}{
		{"tenantId", o.TenantID, o.TenantID == ""}, {"clientId", o.ClientID, o.ClientID == ""},
		{"request", o.Request, o.Request == ""}, {"externalId", o.ExternalID, o.ExternalID == ""},
		{"internalId", o.InternalID, false}, {"operationId", o.OperationID, o.OperationID == ""},
		{"clientRequestId", o.ClientRequestID, o.ClientRequestID == ""},
		{"correlationRequestId", o.CorrelationRequestID, o.CorrelationRequestID == ""},
		{"notificationUri", o.NotificationURI, o.NotificationURI == ""},
		{"startTime", o.StartTime, false}, {"lastTransitionTime", o.LastTransitionTime, false},
		{"status", o.Status, o.Status == ""}, {"error", o.Error, o.Error == nil},
		{"usesNewNodePoolDeletionApproach", o.UsesNewNodePoolDeletionApproach, false},
		{"usesNewExternalAuthDeletionApproach", o.UsesNewExternalAuthDeletionApproach, false},
		{"usesNewClusterDeletionApproach", o.UsesNewClusterDeletionApproach, false},
		{"systemAdminCredentialRequest", o.SystemAdminCredentialRequest, o.SystemAdminCredentialRequest == nil},
		{"systemAdminCredentialRevocation", o.SystemAdminCredentialRevocation, o.SystemAdminCredentialRevocation == nil},
	} {
		if !f.skip {
			p.put(f.key, f.value)
		}
	}
	p.rest(o.unknown)
	props, err := p.bytes()
	if err != nil {
		return nil, err
	}
	var w refWriter
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

// refWriter renders the plain way: json.Marshal for keys and values.
type refWriter struct {
	buf bytes.Buffer
	n   int
	err error
}

func (w *refWriter) key(k string) {
	if w.n == 0 {
		w.buf.WriteByte('{')
	} else {
		w.buf.WriteByte(',')
	}
	w.n++
	kb, _ := json.Marshal(k)
	w.buf.Write(kb)
	w.buf.WriteByte(':')
}

func (w *refWriter) put(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.key(k)
	w.buf.Write(b)
}

func (w *refWriter) putRaw(k string, raw []byte) {
	w.key(k)
	if err := json.Compact(&w.buf, raw); err != nil && w.err == nil {
		w.err = err
	}
}

func (w *refWriter) rest(m members) {
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		w.putRaw(k, m[k])
	}
}

func (w *refWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.n == 0 {
		return []byte("{}"), nil
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

var marshalSeeds = []string{
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","ttl":-3,"properties":{"request":"Create","status":"Accepted",
	  "tenantId":"a<b>&c\"d\\e\u2028f\u00e9","clientId":"tab\there","notificationUri":"https://x/y?a=1&b=2",
	  "cosmosMetadata":{"etag":"\"e\"","instanceVersion":-7},"startTime":"2026-01-01T00:00:00+05:30",
	  "error":{"code":"<c>","message":"m&"},"zz":[1, 2],"a b":"x"}, "env<x>":{"k": true}}`,
	"{\"resourceType\":\"Microsoft.RedHatOpenShift/hcpOperationStatuses\",\"properties\":{\"request\":\"Create\",\"status\":\"Accepted\",\"clientId\":\"bad\xff\"}}",
}

// FuzzMarshalReference: Marshal renders exactly what encoding/json did
// member by member.
func FuzzMarshalReference(f *testing.F) {
	for _, s := range marshalSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	for _, seed := range corpus(f, "FuzzParseOperationDocument") {
		f.Add(seed)
	}
	f.Fuzz(checkMarshalReference)
}

func TestMarshalAgreesWithReference(t *testing.T) {
	for _, s := range marshalSeeds {
		checkMarshalReference(t, []byte(s))
	}
	checkMarshalReference(t, readTestdata(t, "operation.json"))
	d, err := NewOperation(NewOperationParams{Request: RequestDelete, ExternalID: quickCluster, Location: "eastus",
		Name: refOpName, Now: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 7200)), NotificationURI: "https://a/b?c&d"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := d.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	checkMarshalReference(t, body)
}

func checkMarshalReference(t *testing.T, raw []byte) {
	t.Helper()
	d, err := ParseOperation(raw)
	if err != nil {
		return
	}
	got, err := d.Marshal()
	want, werr := marshalReference(d)
	if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Marshal = %s, %v\nreference %s, %v", got, err, want, werr)
	}
}
