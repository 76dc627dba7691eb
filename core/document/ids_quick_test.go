package document

import (
	"testing"

	azarm "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
)

const (
	quickCluster = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"
	quickOpID    = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/e2f8f733-dd90-49b0-8b2b-f390b42aa339"
)

func TestQuickID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		kind Kind
		ok   bool
	}{
		{quickCluster, KindCluster, true},
		{quickCluster + "/nodePools/np1", KindNodePool, true},
		{quickCluster + "/EXTERNALAUTHS/default", KindExternalAuth, true},
		{"/SUBSCRIPTIONS/s/RESOURCEGROUPS/rg/PROVIDERS/microsoft.redhatopenshift/HCPOPENSHIFTCLUSTERS/c", KindCluster, true},
		{quickOpID, KindOther, true},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm", KindOther, true},
		{quickCluster + "/machines/m", KindOther, true},
		// Left to the SDK: other shapes, spellings it trims or skips, and
		// extension resources.
		{quickCluster + "/", KindOther, false},
		{"/subscriptions/s//resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c", KindOther, false},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/my cluster", KindOther, false},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/café", KindOther, false},
		{"/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c", KindOther, false},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/providers/c", KindOther, false},
		{"/subscriptions/s/resourceGroups/rg", KindOther, false},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters", KindOther, false},
		{quickCluster + "/nodePools/np1/versions/v", KindOther, false},
		{"subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c", KindOther, false},
		{"", KindOther, false},
	} {
		if k, ok := quickID(tc.id); k != tc.kind || ok != tc.ok {
			t.Errorf("quickID(%q) = %s, %v; want %s, %v", tc.id, k, ok, tc.kind, tc.ok)
		}
		checkQuickID(t, tc.id)
	}
}

func FuzzQuickID(f *testing.F) {
	for _, s := range []string{quickCluster, quickCluster + "/nodePools/np1", quickCluster + "/externalAuths/e", quickOpID,
		"/subscriptions/s/resourceGroups/rg/providers/p/t/n/providers/q/u/m", "/subscriptions/s/providers/p/locations/l/providers/x",
		"/subscriptions/s/resourceGroups/rg/providers/p/providers/n", "/ subscriptions/s/resourceGroups/rg/providers/p/t/n"} {
		f.Add(s)
	}
	f.Fuzz(checkQuickID)
}

// checkQuickID holds quickID to the SDK: what it accepts the SDK parses,
// and the kind it names is the kind ResourceKindOfID finds.
func checkQuickID(t *testing.T, id string) {
	t.Helper()
	kind, ok := quickID(id)
	if !ok {
		if kind != KindOther {
			t.Fatalf("quickID(%q) named %s without accepting it", id, kind)
		}
		return
	}
	if _, err := azarm.ParseResourceID(id); err != nil {
		t.Fatalf("quickID accepted %q, which the SDK refuses: %v", id, err)
	}
	if kind == KindOther {
		return
	}
	k, _, err := ResourceKindOfID("id", id)
	if err != nil || k != kind {
		t.Fatalf("quickID(%q) = %s; ResourceKindOfID = %s, %v", id, kind, k, err)
	}
	if err := checkResourceID("id", id); err != nil {
		t.Fatalf("checkResourceID(%q) = %v", id, err)
	}
}
