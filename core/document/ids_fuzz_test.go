package document

import (
	"strings"
	"testing"
)

// FuzzResourceKindOfID: resource ID parsing never panics, and whatever it
// accepts as one of our resources yields a usable partition key, a parent
// (for children) and the same Cosmos id whatever the casing.
func FuzzResourceKindOfID(f *testing.F) {
	for _, s := range []string{
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster",
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster/nodePools/np1",
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster/externalAuths/default",
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/e2f8f733-dd90-49b0-8b2b-f390b42aa339",
		"/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c",
		"/subscriptions//resourceGroups/",
		"",
		"not an id",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		kind, rid, err := ResourceKindOfID("resourceID", id)
		if err != nil {
			if !strings.Contains(err.Error(), "resourceID") {
				t.Fatalf("error %q does not name the field", err)
			}
			return
		}
		if rid == nil || rid.SubscriptionID == "" {
			t.Fatalf("accepted %q as a %s without a subscription", id, kind)
		}
		if pk := PartitionKey(rid.SubscriptionID); pk != strings.ToLower(pk) || pk == "" {
			t.Fatalf("partition key %q of %q", pk, id)
		}
		if CosmosID(id) != CosmosID(strings.ToUpper(id)) {
			t.Fatalf("Cosmos id of %q depends on casing", id)
		}
		if kind == KindNodePool || kind == KindExternalAuth {
			parent, err := ParentClusterID(id)
			if err != nil {
				t.Fatalf("child %q has no parent: %v", id, err)
			}
			if k, _, err := ResourceKindOfID("parent", parent); err != nil || k != KindCluster {
				t.Fatalf("parent %q of %q is a %s (%v)", parent, id, k, err)
			}
		}
	})
}
