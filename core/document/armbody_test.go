package document

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestResourceARMBody(t *testing.T) {
	for _, tc := range []struct {
		file string
		id   string
		want map[string]any // members of the body, compared by JSON value
		not  []string       // members that must not appear anywhere in the body
	}{{
		file: "cluster.json",
		id:   "/subscriptions/1D3378D3-5A3F-4712-85A1-2485495DFC4B/resourceGroups/MyRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster",
		want: map[string]any{
			"name":     "myCluster",
			"type":     "Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
			"location": "eastus",
			"tags":     map[string]any{"env": "dev", "aro-hcp.experimental.cluster/max-creation-duration": "45m"},
		},
		not: []string{"serviceProviderProperties", "cosmosMetadata", "clusterServiceID", "activeOperationId", "billingDocumentCosmosID"},
	}, {
		file: "nodepool.json",
		id:   "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster/nodePools/np1",
		want: map[string]any{"name": "np1", "type": "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools"},
		not:  []string{"serviceProviderProperties", "cosmosMetadata", "clusterServiceID"},
	}, {
		file: "externalauth.json",
		id:   "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster/externalAuths/default",
		want: map[string]any{"type": "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths"},
		not:  []string{"serviceProviderProperties", "cosmosMetadata", "location"},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			r := parseResourceFile(t, tc.file)
			out, err := r.ARMBody(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal(out, &body); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, out)
			}
			if body["id"] != tc.id {
				t.Errorf("id = %v, want the requested %s", body["id"], tc.id)
			}
			for k, v := range tc.want {
				if !reflect.DeepEqual(body[k], v) {
					t.Errorf("%s = %#v, want %#v", k, body[k], v)
				}
			}
			props, _ := body["properties"].(map[string]any)
			if props["provisioningState"] != string(r.ProvisioningState()) || props["provisioningState"] == "" {
				t.Errorf("properties.provisioningState = %v, want %s", props["provisioningState"], r.ProvisioningState())
			}
			for _, k := range tc.not {
				if _, ok := body[k]; ok || strings.Contains(string(out), `"`+k+`"`) {
					t.Errorf("body shows internal member %s:\n%s", k, out)
				}
			}
			if _, ok := body["systemData"]; !ok {
				t.Errorf("body has no systemData")
			}
		})
	}
}

// TestClusterARMBodyProperties: customer properties survive whole (unknown
// ones too) and the read-only service-provider values are merged in.
func TestClusterARMBodyProperties(t *testing.T) {
	r := parseResourceFile(t, "cluster.json")
	out, err := r.ARMBody(r.ResourceID())
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Identity   map[string]any `json:"identity"`
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(out, &body); err != nil {
		t.Fatal(err)
	}
	if body.Identity["type"] == nil {
		t.Errorf("cluster identity missing:\n%s", out)
	}
	member := func(obj, key string) any {
		m, _ := body.Properties[obj].(map[string]any)
		return m[key]
	}
	for _, c := range []struct{ obj, key, want string }{
		{"dns", "baseDomain", "abcd.eastus.aroapp.example.com"},
		{"dns", "baseDomainPrefix", "mycluster"},
		{"api", "url", "https://api.mycluster.example.com:443"},
		{"api", "visibility", "Public"},
		{"platform", "issuerUrl", "https://oidc.example.com/x"},
		{"platform", "managedResourceGroup", "myCluster-mrg"},
	} {
		if got := member(c.obj, c.key); got != c.want {
			t.Errorf("properties.%s.%s = %v, want %s", c.obj, c.key, got, c.want)
		}
	}
	if _, ok := body.Properties["someFutureCustomerField"]; !ok {
		t.Errorf("an unknown customer property was dropped")
	}
}

// TestClusterResultAsTheFrontendWritesIt: a cluster's create or update
// result at an api-version is the frontend's body for the same document,
// byte for byte. The golden files are upstream's conversion
// (internal/azureapi/<version>/hcpopenshiftclusters_methods.go at
// c3f02f9e: PtrOrNil on every member but the 2025-12-23 shape's explicit
// zeros, the KMS shape of each version) applied to testdata/
// cluster.frontend.json by hand, then marshalled as coreapi.MarshalJSON
// does (sorted members, 4-space indent); no frontend ran to record them.
// The document holds what each rule acts on: an empty dns, no
// nodeDrainTimeoutMinutes (the frontend writes none for 0), a null and an
// empty member, a zero maxNodesTotal, a customer-managed KMS key.
func TestClusterResultAsTheFrontendWritesIt(t *testing.T) {
	r := parseResourceFile(t, "cluster.frontend.json")
	for _, version := range []string{"2025-12-23-preview", "2024-06-10-preview"} {
		t.Run(version, func(t *testing.T) {
			got, err := r.ARMBodyAt(r.ResourceID(), version)
			if err != nil {
				t.Fatal(err)
			}
			want := readTestdata(t, "cluster.result."+version+".golden.json")
			if string(got) != string(want) {
				t.Errorf("body at %s:\n%s\nwant the frontend's\n%s", version, got, want)
			}
		})
	}
	// Without an api-version the stored members are shown as stored.
	got, err := r.ARMBodyAt(r.ResourceID(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"dns": {}`) || !strings.Contains(string(got), `"maxNodesTotal": 0`) {
		t.Errorf("body without an api-version:\n%s", got)
	}
}
