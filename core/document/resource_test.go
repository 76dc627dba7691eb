package document

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

func parseResourceFile(t *testing.T, name string) *Resource {
	t.Helper()
	r, err := ParseResource(readTestdata(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestClusterAccessors(t *testing.T) {
	r := parseResourceFile(t, "cluster.json")
	if r.Kind != KindCluster || r.ID() != CosmosID(refCluster) || r.ResourceID() != refCluster || r.PartitionKey() != refSub {
		t.Errorf("envelope: kind %v id %s", r.Kind, r.ID())
	}
	if r.ETag != `"0000b1b2-0000-4d00-0000-6a29fae10000"` || r.Timestamp != 1773453566 || r.InstanceVersion() != 4 {
		t.Errorf("etag %q ts %d version %d", r.ETag, r.Timestamp, r.InstanceVersion())
	}
	if r.ProvisioningState() != arm.ProvisioningStateProvisioning || r.ActiveOperationID() != refOpName {
		t.Errorf("state %s active %s", r.ProvisioningState(), r.ActiveOperationID())
	}
	if r.ClusterServiceID() != "/api/aro_hcp/v1alpha1/clusters/2qrppk0otds3rdmdcojqcqkqq8f0s591" || r.PendingClusterServiceID() != "" {
		t.Errorf("cs ids %q %q", r.ClusterServiceID(), r.PendingClusterServiceID())
	}
	if r.Name() != "myCluster" || r.Location() != "eastus" || r.Tags()["env"] != "dev" {
		t.Errorf("name %s location %s tags %v", r.Name(), r.Location(), r.Tags())
	}
	if v := r.Version(); v != (Version{ID: "4.20", ChannelGroup: "stable"}) {
		t.Errorf("version %+v", v)
	}
	if n, ok := r.NodeDrainTimeoutMinutes(); !ok || n != 15 {
		t.Errorf("nodeDrainTimeoutMinutes %d %v", n, ok)
	}
	if c, ok := r.AuthorizedCIDRs(); !ok || !slices.Equal(c, []string{"10.0.0.0/8", "192.168.1.1/32"}) {
		t.Errorf("authorizedCidrs %v %v", c, ok)
	}
	if r.ManagedResourceGroup() != "myCluster-mrg" {
		t.Errorf("mrg %q", r.ManagedResourceGroup())
	}
	if d, ok := r.CreateOperationCompletionDeadline(); !ok || !d.Equal(time.Date(2026, 3, 14, 2, 59, 26, 0, time.UTC)) {
		t.Errorf("create deadline %v %v", d, ok)
	}
	if _, ok := r.DeletionTimestamp(); ok {
		t.Error("deletionTimestamp present")
	}
	if _, err := r.NodePool(); err == nil {
		t.Error("NodePool() on a cluster accepted")
	}
}

func TestNodePoolAndExternalAuthAccessors(t *testing.T) {
	np := parseResourceFile(t, "nodepool.json")
	if np.Kind != KindNodePool || np.ProvisioningState() != arm.ProvisioningStateDeleting {
		t.Errorf("node pool kind %v state %s", np.Kind, np.ProvisioningState())
	}
	spec, err := np.NodePool()
	if err != nil {
		t.Fatal(err)
	}
	if spec.Version != (Version{"4.20.3", "stable"}) || spec.VMSize != "Standard_D8s_v3" || spec.Replicas != 3 || !spec.AutoRepair ||
		spec.Labels["b"] != "two" || len(spec.Labels) != 2 {
		t.Errorf("node pool spec %+v", spec)
	}
	if ts, ok := np.DeletionTimestamp(); !ok || !ts.Equal(time.Date(2026, 3, 14, 4, 0, 1, 0, time.UTC)) {
		t.Errorf("deletionTimestamp %v %v", ts, ok)
	}
	if err := np.SetPendingClusterServiceID("x"); err == nil {
		t.Error("pendingClusterServiceID on a node pool accepted")
	}
	if _, ok := np.AuthorizedCIDRs(); ok {
		t.Error("node pool has authorized CIDRs")
	}

	ea := parseResourceFile(t, "externalauth.json")
	if ea.Kind != KindExternalAuth || ea.ProvisioningState() != arm.ProvisioningStateAccepted || ea.Location() != "" {
		t.Errorf("external auth kind %v state %s", ea.Kind, ea.ProvisioningState())
	}
	iss, err := ea.Issuer()
	if err != nil {
		t.Fatal(err)
	}
	if iss.URL != "https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0" || !slices.Equal(iss.Audiences, []string{"app-1", "app-2"}) || iss.CA != "" {
		t.Errorf("issuer %+v", iss)
	}
	if v := ea.Version(); v != (Version{}) {
		t.Errorf("external auth version %+v", v)
	}
}

// TestResourceRewriteTouchesOnlyOwnedFields round-trips full ARO-HCP-shaped
// documents, full of members this project has never heard of, through a
// lifecycle-style edit and proves (on decoded trees) that only the touched
// members changed.
func TestResourceRewriteTouchesOnlyOwnedFields(t *testing.T) {
	at := time.Date(2026, 3, 14, 5, 6, 7, 999, time.FixedZone("x", -3600))
	for _, tc := range []struct {
		file, golden string
		edit         func(r *Resource)
		changed      []string
	}{
		{"cluster.json", "cluster.replace.golden.json", func(r *Resource) {
			r.SetProvisioningState(arm.ProvisioningStateSucceeded)
			r.SetActiveOperationID("")
		}, []string{
			".properties.serviceProviderProperties.provisioningState",
			".properties.serviceProviderProperties.activeOperationId (removed)",
		}},
		{"cluster.json", "cluster.delete.golden.json", func(r *Resource) {
			r.SetClusterServiceDeletionTimestamp(at)
			if err := r.SetPendingClusterServiceID("/api/aro_hcp/v1alpha1/clusters/x"); err != nil {
				t.Fatal(err)
			}
			if err := r.SetRevokeCredentialsOperationID("op"); err != nil {
				t.Fatal(err)
			}
			r.SetClusterServiceID("")
		}, []string{
			".properties.serviceProviderProperties.clusterServiceDeletionTimestamp (added)",
			".properties.serviceProviderProperties.pendingClusterServiceID (added)",
			".properties.serviceProviderProperties.revokeCredentialsOperationId (added)",
			".properties.serviceProviderProperties.clusterServiceID (removed)",
		}},
		{"nodepool.json", "nodepool.replace.golden.json", func(r *Resource) {
			r.SetProvisioningState(arm.ProvisioningStateFailed)
			r.SetClusterServiceID("/api/aro_hcp/v1alpha1/clusters/c/node_pools/np1")
		}, []string{
			".properties.properties.provisioningState",
			".properties.serviceProviderProperties.clusterServiceID",
		}},
		{"externalauth.json", "externalauth.replace.golden.json", func(r *Resource) {
			r.SetProvisioningState("")
			r.SetDeletionTimestamp(at)
		}, []string{
			".properties.properties.provisioningState",
			".properties.serviceProviderProperties.deletionTimestamp (added)",
		}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			raw := readTestdata(t, tc.file)
			r := parseResourceFile(t, tc.file)
			version := r.InstanceVersion()
			tc.edit(r)
			out, err := r.MarshalReplace()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, out)

			in := decodeAny(t, raw).(map[string]any)
			for _, k := range cosmosSystemFields {
				delete(in, k)
			}
			diff := diffTrees("", in, decodeAny(t, out))
			want := append(slices.Clone(tc.changed), ".properties.cosmosMetadata.instanceVersion")
			if _, had := in["properties"].(map[string]any)["cosmosMetadata"].(map[string]any)["etag"]; had {
				want = append(want, ".properties.cosmosMetadata.etag")
			} else {
				want = append(want, ".properties.cosmosMetadata.etag (added)")
			}
			sort.Strings(diff)
			sort.Strings(want)
			if !slices.Equal(diff, want) {
				t.Errorf("changed members\n got %v\nwant %v", diff, want)
			}

			back, err := ParseResource(out)
			if err != nil {
				t.Fatal(err)
			}
			if back.InstanceVersion() != version+1 {
				t.Errorf("instanceVersion %d, want %d", back.InstanceVersion(), version+1)
			}
			if r.InstanceVersion() != version {
				t.Error("MarshalReplace modified its receiver")
			}
		})
	}
}

func TestResourceTimesAreWrittenLikeMetav1(t *testing.T) {
	r := parseResourceFile(t, "nodepool.json")
	r.SetClusterServiceDeletionTimestamp(time.Date(2026, 3, 14, 5, 6, 7, 999, time.FixedZone("x", -3600)))
	out, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"clusterServiceDeletionTimestamp":"2026-03-14T06:06:07Z"`) {
		t.Errorf("time not written as UTC seconds: %s", out)
	}
	r.SetClusterServiceDeletionTimestamp(time.Time{})
	if _, ok := r.ClusterServiceDeletionTimestamp(); ok {
		t.Error("zero time did not remove the member")
	}
}

func TestResourceSettersCreateMissingObjects(t *testing.T) {
	raw := `{"id":"i","partitionKey":"p","resourceID":"` + refExtAuth + `","resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths",
	  "properties":{"serviceProviderProperties":null},"_etag":"\"e\""}`
	r, err := ParseResource([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.InstanceVersion() != 1 {
		t.Errorf("legacy instanceVersion %d", r.InstanceVersion())
	}
	r.SetProvisioningState(arm.ProvisioningStateAccepted)
	r.SetActiveOperationID("op")
	out, err := r.MarshalReplace()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseResource(out)
	if err != nil {
		t.Fatal(err)
	}
	if back.ProvisioningState() != arm.ProvisioningStateAccepted || back.ActiveOperationID() != "op" || back.InstanceVersion() != 2 {
		t.Errorf("read back: %s", out)
	}
	s := string(out)
	for _, want := range []string{`"resourceID":"` + refExtAuth + `"`, `"partitionKey":"p"`} {
		if strings.Count(s, want) != 2 { // envelope and cosmosMetadata
			t.Errorf("cosmosMetadata not filled from the envelope (%s): %s", want, s)
		}
	}
}

func TestParseResourceRejects(t *testing.T) {
	base := func(mut func(m map[string]any)) []byte {
		m := decodeAny(t, readTestdata(t, "cluster.json")).(map[string]any)
		mut(m)
		return mustMarshal(t, m)
	}
	props := func(m map[string]any) map[string]any { return m["properties"].(map[string]any) }
	sppOf := func(m map[string]any) map[string]any { return props(m)["serviceProviderProperties"].(map[string]any) }
	for _, tc := range []struct {
		name  string
		raw   []byte
		wants []string
	}{
		{"not json", []byte(`{"a":`), []string{"resource document"}},
		{"trailing data", []byte(`{} {}`), []string{"trailing"}},
		{"string", []byte(`"x"`), []string{"resource document", "string"}},
		{"operation", readTestdata(t, "operation.json"), []string{"resourceType", "hcpOperationStatuses"}},
		{"unknown type", base(func(m map[string]any) { m["resourceType"] = "Microsoft.Compute/virtualMachines" }), []string{"resourceType", "Microsoft.Compute/virtualMachines"}},
		{"no type", base(func(m map[string]any) { delete(m, "resourceType") }), []string{"resourceType", `""`}},
		{"type not string", base(func(m map[string]any) { m["resourceType"] = 7 }), []string{"resourceType", "7"}},
		{"no properties", base(func(m map[string]any) { delete(m, "properties") }), []string{"properties"}},
		{"properties array", base(func(m map[string]any) { m["properties"] = []any{} }), []string{"properties", "array"}},
		{"spp string", base(func(m map[string]any) { props(m)["serviceProviderProperties"] = "x" }), []string{"properties.serviceProviderProperties", `"x"`}},
		{"bad state", base(func(m map[string]any) { sppOf(m)["provisioningState"] = "Exploded" }), []string{"properties.serviceProviderProperties.provisioningState", "Exploded"}},
		{"bad time", base(func(m map[string]any) { sppOf(m)["deletionTimestamp"] = "noon" }), []string{"properties.serviceProviderProperties.deletionTimestamp", "noon"}},
		{"bad version", base(func(m map[string]any) {
			props(m)["cosmosMetadata"].(map[string]any)["instanceVersion"] = 1.5
		}), []string{"properties.cosmosMetadata.instanceVersion", "1.5"}},
		{"bad cidrs", base(func(m map[string]any) {
			props(m)["customerProperties"].(map[string]any)["api"].(map[string]any)["authorizedCidrs"] = []any{"a", 1}
		}), []string{"properties.customerProperties.api.authorizedCidrs[1]"}},
		{"bad tags", base(func(m map[string]any) { props(m)["tags"] = map[string]any{"k": true} }), []string{"properties.tags.k", "true"}},
		{"bad etag", base(func(m map[string]any) { m["_etag"] = 1 }), []string{"_etag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResource(tc.raw)
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

func TestResourceMarshalReplaceNeedsETag(t *testing.T) {
	r := parseResourceFile(t, "cluster.json")
	r.ETag = ""
	if _, err := r.MarshalReplace(); err == nil {
		t.Error("replace without an etag accepted")
	}
}

func TestResourceCloneIsDeep(t *testing.T) {
	labels := func(r *Resource) map[string]any {
		return r.doc["properties"].(map[string]any)["properties"].(map[string]any)["labels"].(map[string]any)
	}
	t.Run("of a document as read", func(t *testing.T) {
		r := parseResourceFile(t, "nodepool.json")
		before, _ := r.Marshal()
		c := r.Clone()
		c.SetProvisioningState(arm.ProvisioningStateSucceeded)
		labels(c)["a"] = "changed"
		if after, _ := r.Marshal(); string(before) != string(after) {
			t.Error("Clone shares state with the original")
		}
	})
	// An edited original holds the whole decoded document: Clone must
	// copy it all the way down, in both directions.
	t.Run("of an edited document", func(t *testing.T) {
		r := parseResourceFile(t, "nodepool.json")
		r.SetProvisioningState(arm.ProvisioningStateUpdating)
		if r.doc == nil {
			t.Fatal("editing did not decode the document; this test would not reach the deep copy")
		}
		before, _ := r.Marshal()
		c := r.Clone()
		labels(c)["a"] = "changed in the clone"
		if after, _ := r.Marshal(); string(before) != string(after) {
			t.Error("a change to the clone's labels reached the original")
		}
		labels(r)["a"] = "changed in the original"
		if labels(c)["a"] != "changed in the clone" {
			t.Error("a change to the original's labels reached the clone")
		}
	})
}
