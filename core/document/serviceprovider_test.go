package document

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseServiceProvider: a service-provider document parses when its
// type is one and the members a setter walks are objects; otherwise the
// error names the field and value. A replace keeps unknown members, drops
// Cosmos's, bumps instanceVersion and records the etag read.
func TestParseServiceProvider(t *testing.T) {
	const cluster = `{"id":"x","partitionKey":"p","resourceID":"/r/serviceProviderClusters/default",` +
		`"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters","_etag":"\"e1\"",` +
		`"_lsn":7,"_ts":1,"future":{"n":1.50},"properties":{"cosmosMetadata":{"instanceVersion":3},"kept":true,` +
		`"status":{"control_plane_version":{"active_versions":[{"version":"4.20.25"}]}}}}`
	for _, tc := range []struct {
		name, body, err string
	}{
		{"cluster", cluster, ""},
		{"node pool", strings.Replace(strings.Replace(cluster, "serviceProviderClusters\",", "nodePools/serviceProviderNodePools\",", 1),
			"control_plane_version", "nodePoolVersion", 1), ""},
		{"another type", strings.Replace(cluster, "/serviceProviderClusters\"", "/nodePools\"", 1), `resourceType: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools"`},
		{"status not an object", strings.Replace(cluster, `"status":{"control_plane_version":{"active_versions":[{"version":"4.20.25"}]}}`, `"status":"ok"`, 1), `properties.status: "ok"`},
		{"instanceVersion a string", strings.Replace(cluster, `"instanceVersion":3`, `"instanceVersion":"3"`, 1), `properties.cosmosMetadata.instanceVersion: "3"`},
		{"not JSON", `{"id":`, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := ParseServiceProvider([]byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "cluster" && sp.ActiveVersion() != "4.20.25" {
				t.Errorf("ActiveVersion = %q", sp.ActiveVersion())
			}
			sp.SetActiveVersion("4.21.20")
			raw, err := sp.MarshalReplace()
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.UseNumber()
			if err := dec.Decode(&got); err != nil {
				t.Fatal(err)
			}
			for _, k := range cosmosSystemFields {
				if _, ok := got[k]; ok {
					t.Errorf("system member %s written", k)
				}
			}
			cm := got["properties"].(map[string]any)["cosmosMetadata"].(map[string]any)
			if cm["instanceVersion"] != json.Number("4") || cm["etag"] != `"e1"` || cm["resourceID"] != "/r/serviceProviderClusters/default" {
				t.Errorf("cosmosMetadata = %v", cm)
			}
			if !strings.Contains(string(raw), `"future":{"n":1.50}`) || got["properties"].(map[string]any)["kept"] != true {
				t.Errorf("unknown members not kept as written: %s", raw)
			}
			if sp2, err := ParseServiceProvider(append(raw[:len(raw)-1:len(raw)-1], `,"_etag":"\"e2\""}`...)); err != nil || sp2.ActiveVersion() != "4.21.20" {
				t.Errorf("re-read = %v, %v; want 4.21.20", sp2, err)
			}
		})
	}
}

// TestServiceProviderChannels: a cluster's document keeps the channel
// list beside the active versions, every other member as read.
func TestServiceProviderChannels(t *testing.T) {
	const body = `{"id":"x","partitionKey":"p","resourceID":"/r/serviceProviderClusters/default",` +
		`"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters","_etag":"\"e1\"",` +
		`"properties":{"cosmosMetadata":{"instanceVersion":3},"status":{"maestroReadonlyBundles":[{"name":"a"}],` +
		`"desiredVersionChannels":["stable-4.20",7]}}}`
	sp, err := ParseServiceProvider([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !sp.HasChannels() {
		t.Fatal("a cluster's document keeps no channels")
	}
	if got, ok := sp.DesiredVersionChannels(); ok {
		t.Errorf("a list holding a number read as %q", got)
	}
	sp.SetDesiredVersionChannels([]string{"stable-4.20", "stable-4.21"})
	sp.SetActiveVersion("4.20.25")
	raw, err := sp.MarshalReplace()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"desiredVersionChannels":["stable-4.20","stable-4.21"]`) ||
		!strings.Contains(string(raw), `"maestroReadonlyBundles":[{"name":"a"}]`) {
		t.Errorf("replace = %s", raw)
	}
	again, err := ParseServiceProvider(append(raw[:len(raw)-1:len(raw)-1], []byte(`,"_etag":"\"e2\""}`)...))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.DesiredVersionChannels(); !ok || strings.Join(got, ",") != "stable-4.20,stable-4.21" {
		t.Errorf("channels read back = %q, %v", got, ok)
	}
	np, err := NewServiceProvider(&Resource{Kind: KindNodePool})
	if err == nil && np.HasChannels() {
		t.Error("a node pool's document keeps channels")
	}
}
