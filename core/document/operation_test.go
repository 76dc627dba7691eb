package document

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

func TestParseOperationReferenceDocument(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := d.Properties
	if d.ID != "6e7906b8-195a-5089-af7d-ff5988327ebe" || d.TTL != OperationTTL || d.PartitionKey != refSub {
		t.Errorf("envelope: %+v", d)
	}
	if d.ETag != `"0000a625-0000-4d00-0000-6a29fae10000"` || d.Timestamp != 1773455462 {
		t.Errorf("system fields: etag %q ts %d", d.ETag, d.Timestamp)
	}
	if p.CosmosMetadata.ETag != d.ETag {
		t.Errorf("cosmosMetadata.etag %q not overwritten from _etag", p.CosmosMetadata.ETag)
	}
	if p.CosmosMetadata.InstanceVersion != 3 {
		t.Errorf("instanceVersion %d", p.CosmosMetadata.InstanceVersion)
	}
	if p.Request != RequestCreate || p.Status != arm.ProvisioningStateFailed || p.ExternalID != refCluster {
		t.Errorf("properties: %+v", p)
	}
	if p.Error == nil || p.Error.Code != "InternalServerError" {
		t.Errorf("error: %+v", p.Error)
	}
	if want := time.Date(2026, 3, 14, 1, 59, 26, 714826736, time.UTC); !p.StartTime.Equal(want) {
		t.Errorf("startTime %v", p.StartTime)
	}
	if d.Name() != refOpName {
		t.Errorf("Name = %s", d.Name())
	}
	if k, err := d.TargetKind(); err != nil || k != KindCluster {
		t.Errorf("TargetKind = %v, %v", k, err)
	}
	if sub, err := d.SubscriptionID(); err != nil || sub != refSub {
		t.Errorf("SubscriptionID = %v, %v", sub, err)
	}
}

func TestOperationRoundTripKeepsOrderAndUnknownFields(t *testing.T) {
	raw := readTestdata(t, "operation.json")
	d, err := ParseOperation(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "operation.roundtrip.golden.json", out)

	// In meaning, the round trip changes exactly: system fields dropped and
	// the stale cosmosMetadata.etag replaced by _etag.
	in, got := decodeAny(t, raw).(map[string]any), decodeAny(t, out).(map[string]any)
	for _, k := range cosmosSystemFields {
		delete(in, k)
	}
	in["properties"].(map[string]any)["cosmosMetadata"].(map[string]any)["etag"] = d.ETag
	if diff := diffTrees("", in, got); len(diff) != 0 {
		t.Errorf("round trip changed %v", diff)
	}

	// Marshal order: ARO-HCP's, unknown members last.
	wantOrder := []string{"cosmosMetadata", "tenantId", "clientId", "request", "externalId", "internalId",
		"operationId", "clientRequestId", "correlationRequestId", "startTime", "lastTransitionTime", "status",
		"error", "usesNewNodePoolDeletionApproach", "usesNewExternalAuthDeletionApproach",
		"usesNewClusterDeletionApproach", "futurePropertiesField"}
	if got := keyOrder(t, out, "properties"); !slices.Equal(got, wantOrder) {
		t.Errorf("properties order\n got %v\nwant %v", got, wantOrder)
	}
	if got, want := keyOrder(t, out, ""), []string{"id", "ttl", "partitionKey", "resourceID", "resourceType", "properties", "futureEnvelopeField"}; !slices.Equal(got, want) {
		t.Errorf("envelope order %v", got)
	}
}

// keyOrder lists the member names of the object at top-level key sub (""
// for the document itself) in the order they appear.
func keyOrder(t *testing.T, raw []byte, sub string) []string {
	t.Helper()
	if sub != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		raw = m[sub]
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestOperationMarshalReplaceAndCreate(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	d.TTL = 0 // a write must stamp it again
	out, err := d.MarshalReplace()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "operation.replace.golden.json", out)
	r, err := ParseOperation(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.TTL != OperationTTL || r.Properties.CosmosMetadata.InstanceVersion != 4 {
		t.Errorf("replace: ttl %d version %d", r.TTL, r.Properties.CosmosMetadata.InstanceVersion)
	}
	if d.Properties.CosmosMetadata.InstanceVersion != 3 || d.TTL != 0 {
		t.Error("MarshalReplace modified its receiver")
	}

	c, err := d.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		TTL        int `json:"ttl"`
		Properties struct {
			CosmosMetadata map[string]any `json:"cosmosMetadata"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(c, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Properties.CosmosMetadata["etag"]; ok || m.TTL != OperationTTL || m.Properties.CosmosMetadata["instanceVersion"] != float64(1) {
		t.Errorf("create: %s", c)
	}

	d.ETag = ""
	if _, err := d.MarshalReplace(); err == nil {
		t.Error("MarshalReplace without an etag accepted")
	}
}

func TestParseOperationLegacyMetadata(t *testing.T) {
	raw := `{"id":"x","partitionKey":"` + refSub + `","resourceID":"` + refOperation + `",
	  "resourceType":"microsoft.redhatopenshift/HCPOPERATIONSTATUSES",
	  "properties":{"resourceId":"legacy","request":"Delete","status":"Deleting","startTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}}`
	d, err := ParseOperation([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	cm := d.Properties.CosmosMetadata
	if cm.ResourceID != refOperation || cm.PartitionKey != refSub || cm.InstanceVersion != 1 {
		t.Errorf("cosmosMetadata not filled from the envelope: %+v", cm)
	}
	out, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"internalId":""`, `"usesNewClusterDeletionApproach":false`, `"resourceId":"legacy"`} {
		if !strings.Contains(s, want) {
			t.Errorf("marshal lacks %s: %s", want, s)
		}
	}
}

func TestParseOperationRejects(t *testing.T) {
	base := func(mut func(m map[string]any)) []byte {
		m := decodeAny(t, readTestdata(t, "operation.json")).(map[string]any)
		mut(m)
		b, _ := json.Marshal(m)
		return b
	}
	props := func(m map[string]any) map[string]any { return m["properties"].(map[string]any) }
	for _, tc := range []struct {
		name  string
		raw   []byte
		wants []string // substrings of the error
	}{
		{"not json", []byte(`{`), []string{"operation document"}},
		{"array", []byte(`[]`), []string{"operation document"}},
		{"null", []byte(`null`), []string{"operation document"}},
		{"cluster type", base(func(m map[string]any) { m["resourceType"] = arm.ClusterResourceType }), []string{"resourceType", arm.ClusterResourceType}},
		{"no properties", base(func(m map[string]any) { delete(m, "properties") }), []string{"properties"}},
		{"unknown request", base(func(m map[string]any) { props(m)["request"] = "Frobnicate" }), []string{"properties.request", "Frobnicate"}},
		{"lower-case request", base(func(m map[string]any) { props(m)["request"] = "create" }), []string{"properties.request", `"create"`}},
		{"missing request", base(func(m map[string]any) { delete(props(m), "request") }), []string{"properties.request", `""`}},
		{"unknown status", base(func(m map[string]any) { props(m)["status"] = "Exploded" }), []string{"properties.status", "Exploded"}},
		{"bad externalId", base(func(m map[string]any) { props(m)["externalId"] = "clusters/x" }), []string{"properties.externalId", "clusters/x"}},
		{"bad operationId", base(func(m map[string]any) { props(m)["operationId"] = "/nope" }), []string{"properties.operationId", "/nope"}},
		{"bad startTime", base(func(m map[string]any) { props(m)["startTime"] = "yesterday" }), []string{"properties.startTime", "yesterday"}},
		{"ttl string", base(func(m map[string]any) { m["ttl"] = "7d" }), []string{"ttl", "7d"}},
		{"error not object", base(func(m map[string]any) { props(m)["error"] = 5 }), []string{"properties.error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOperation(tc.raw)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	for _, ok := range []string{"Create", "Update", "Delete", "RequestCredential", "RevokeCredentials"} {
		if r, err := ParseRequest(ok); err != nil || string(r) != ok {
			t.Errorf("ParseRequest(%s) = %v, %v", ok, r, err)
		}
	}
	for _, bad := range []string{"", "create", "DELETE", "Patch", "RequestCredentials"} {
		if _, err := ParseRequest(bad); err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("ParseRequest(%q) = %v", bad, err)
		}
	}
}

func TestNewOperation(t *testing.T) {
	now := time.Date(2026, 3, 14, 1, 59, 26, 714826736, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		req        Request
		target     string
		wantStatus arm.ProvisioningState
		// usesNew: the cluster, node pool and external auth flags.
		usesNew [3]bool
	}{
		{RequestCreate, refCluster, arm.ProvisioningStateAccepted, [3]bool{}},
		{RequestUpdate, refNodePool, arm.ProvisioningStateAccepted, [3]bool{}},
		{RequestDelete, refCluster, arm.ProvisioningStateDeleting, [3]bool{true, false, false}},
		{RequestDelete, refNodePool, arm.ProvisioningStateDeleting, [3]bool{false, true, false}},
		{RequestDelete, refExtAuth, arm.ProvisioningStateDeleting, [3]bool{false, false, true}},
		{RequestRequestCredential, refCluster, arm.ProvisioningStateAccepted, [3]bool{}},
		{RequestRevokeCredentials, refCluster, arm.ProvisioningStateAccepted, [3]bool{}},
	} {
		d, err := NewOperation(NewOperationParams{
			Request: tc.req, ExternalID: tc.target, Location: "eastus", Name: refOpName, Now: now,
			TenantID: "t", ClientID: "c", NotificationURI: "https://arm/notify",
			ClientRequestID: "crid", CorrelationRequestID: "corr",
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.req, err)
		}
		p := d.Properties
		if d.ID != "6e7906b8-195a-5089-af7d-ff5988327ebe" || d.ResourceID != refOperation || p.CosmosMetadata.ResourceID != refOperation {
			t.Errorf("%s: ids %s %s", tc.req, d.ID, d.ResourceID)
		}
		if p.OperationID != OperationID(refSub, "eastus", refOpName) || d.PartitionKey != refSub || d.TTL != OperationTTL {
			t.Errorf("%s: operationId %s pk %s", tc.req, p.OperationID, d.PartitionKey)
		}
		got := [3]bool{p.UsesNewClusterDeletionApproach, p.UsesNewNodePoolDeletionApproach, p.UsesNewExternalAuthDeletionApproach}
		if p.Status != tc.wantStatus || got != tc.usesNew {
			t.Errorf("%s %s: status %s, usesNew cluster/nodePool/externalAuth %v, want %s %v", tc.req, tc.target, p.Status, got, tc.wantStatus, tc.usesNew)
		}
		if !p.StartTime.Equal(now) || p.StartTime != p.LastTransitionTime || p.StartTime.Location() != time.UTC {
			t.Errorf("%s: times %v %v", tc.req, p.StartTime, p.LastTransitionTime)
		}
		raw, err := d.MarshalCreate()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseOperation(raw)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.req, err, raw)
		}
		if back.Properties.Request != tc.req || back.Name() != refOpName {
			t.Errorf("%s: read back %+v", tc.req, back.Properties)
		}
		if tc.req == RequestCreate {
			golden(t, "operation.new.golden.json", raw)
		}
	}
}

func TestNewOperationRejects(t *testing.T) {
	ok := NewOperationParams{Request: RequestCreate, ExternalID: refCluster, Location: "eastus", Name: refOpName, Now: time.Unix(1, 0)}
	for _, tc := range []struct {
		name string
		mut  func(p *NewOperationParams)
		want string
	}{
		{"request", func(p *NewOperationParams) { p.Request = "Nope" }, `request: "Nope"`},
		{"externalId", func(p *NewOperationParams) { p.ExternalID = "/subscriptions/x" }, `externalId: "/subscriptions/x"`},
		{"location", func(p *NewOperationParams) { p.Location = "" }, "location"},
		{"name", func(p *NewOperationParams) { p.Name = "op-1" }, `name: "op-1"`},
		{"now", func(p *NewOperationParams) { p.Now = time.Time{} }, "now"},
	} {
		p := ok
		tc.mut(&p)
		if _, err := NewOperation(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestToStatus(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := d.ToStatus()
	body, err := s.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "operation.status.golden.json", body)
	if s.EndTime == nil || !s.EndTime.Equal(d.Properties.LastTransitionTime) {
		t.Errorf("terminal op without endTime: %s", body)
	}
	d.Properties.Status = arm.ProvisioningStateProvisioning
	if s := d.ToStatus(); s.EndTime != nil || s.Name != refOpName || s.ID != d.Properties.OperationID {
		t.Errorf("non-terminal status: %+v", s)
	}
}

func TestCloneIsDeep(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := d.Marshal()
	c := d.Clone()
	c.Properties.Error.Code = "changed"
	c.Properties.unknown["futurePropertiesField"] = json.RawMessage(`1`)
	c.unknown["x"] = json.RawMessage(`2`)
	after, _ := d.Marshal()
	if string(before) != string(after) {
		t.Errorf("Clone shares state with the original")
	}
}

func TestSetStatus(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 3, 0, 0, 5, time.FixedZone("x", 7200))
	orig := d.Properties.Error
	d.Properties.SetStatus(now, arm.ProvisioningStateCanceled, nil)
	if d.Properties.Status != arm.ProvisioningStateCanceled || !d.Properties.LastTransitionTime.Equal(now) ||
		d.Properties.LastTransitionTime.Location() != time.UTC || d.Properties.Error != orig {
		t.Errorf("SetStatus(nil error): %+v", d.Properties)
	}
	e := &arm.CloudErrorBody{Code: arm.CodeCanceled, Message: "This operation was superseded by another"}
	d.Properties.SetStatus(now, arm.ProvisioningStateCanceled, e)
	e.Message = "mutated by the caller"
	if d.Properties.Error.Code != arm.CodeCanceled || d.Properties.Error.Message != "This operation was superseded by another" {
		t.Errorf("SetStatus error: %+v", d.Properties.Error)
	}
}

func TestWritesRefuseBadKeys(t *testing.T) {
	for _, pk := range []string{"", "1D3378D3-5A3F-4712-85A1-2485495DFC4B"} {
		d, err := ParseOperation(readTestdata(t, "operation.json"))
		if err != nil {
			t.Fatal(err)
		}
		d.PartitionKey = pk
		if _, err := d.MarshalCreate(); err == nil || !strings.Contains(err.Error(), "partitionKey") {
			t.Errorf("MarshalCreate with partitionKey %q: %v", pk, err)
		}
		if _, err := d.MarshalReplace(); err == nil || !strings.Contains(err.Error(), "partitionKey") {
			t.Errorf("MarshalReplace with partitionKey %q: %v", pk, err)
		}
	}
}

// TestToStatusErrorOnFailedAndCanceled: ARM requires error.code on a
// Failed or Canceled status; a document whose writer recorded none still
// gets one, and a recorded one is kept as it is.
func TestToStatusErrorOnFailedAndCanceled(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status arm.ProvisioningState
		stored *arm.CloudErrorBody
		code   string
	}{
		{arm.ProvisioningStateCanceled, nil, arm.CodeCanceled},
		{arm.ProvisioningStateFailed, nil, arm.CodeInternalServerError},
		{arm.ProvisioningStateCanceled, &arm.CloudErrorBody{Code: arm.CodeCanceled, Message: "This operation was superseded by another"}, arm.CodeCanceled},
		{arm.ProvisioningStateFailed, &arm.CloudErrorBody{Code: "OCM3055", Message: "install failed"}, "OCM3055"},
		{arm.ProvisioningStateSucceeded, nil, ""},
		{arm.ProvisioningStateProvisioning, nil, ""},
	} {
		d.Properties.Status, d.Properties.Error = tc.status, tc.stored
		s := d.ToStatus()
		if got := ""; s.Error != nil {
			got = s.Error.Code
			if got != tc.code || s.Error.Message == "" {
				t.Errorf("%s with %+v: error %+v, want code %q and a message", tc.status, tc.stored, s.Error, tc.code)
			}
		} else if tc.code != "" {
			t.Errorf("%s with %+v: no error, want code %q", tc.status, tc.stored, tc.code)
		}
	}
}
