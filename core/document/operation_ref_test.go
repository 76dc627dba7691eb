package document

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

// parseOperationReference is ParseOperation as it was before the scanner:
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
