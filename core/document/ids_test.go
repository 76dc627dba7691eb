package document

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The ids of ARO-HCP's example documents (testdata/cluster.json and
// operation.json).
const (
	refSub       = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	refOpName    = "e2f8f733-dd90-49b0-8b2b-f390b42aa339"
	refCluster   = "/subscriptions/" + refSub + "/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"
	refNodePool  = refCluster + "/nodePools/np1"
	refExtAuth   = refCluster + "/externalAuths/default"
	refOperation = "/subscriptions/" + refSub + "/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/" + refOpName
)

func TestCosmosIDMatchesReference(t *testing.T) {
	for _, tc := range []struct{ resourceID, want string }{
		{refOperation, "6e7906b8-195a-5089-af7d-ff5988327ebe"},
		{refCluster, "3db9af13-4eef-554c-864f-03a158aa3699"},
		{refNodePool, "506e9fb1-cd00-525e-a93d-01ceb7a7f1a9"},
		{refExtAuth, "9acc51b9-437a-5d41-9db0-5e2c28101c14"},
	} {
		if got := CosmosID(tc.resourceID); got != tc.want {
			t.Errorf("CosmosID(%s) = %s, want %s", tc.resourceID, got, tc.want)
		}
		// The hash is of the lower-cased ID: casing never changes the id.
		if got := CosmosID(strings.ToUpper(tc.resourceID)); got != tc.want {
			t.Errorf("CosmosID(upper %s) = %s, want %s", tc.resourceID, got, tc.want)
		}
	}
}

func TestOperationIDs(t *testing.T) {
	if got := OperationResourceID(refSub, refOpName); got != refOperation {
		t.Errorf("OperationResourceID = %s", got)
	}
	want := "/subscriptions/" + refSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + refOpName
	if got := OperationID(refSub, "eastus", refOpName); got != want {
		t.Errorf("OperationID = %s, want %s", got, want)
	}
	if got := CosmosID(OperationResourceID(refSub, refOpName)); got != "6e7906b8-195a-5089-af7d-ff5988327ebe" {
		t.Errorf("operation cosmos id = %s", got)
	}
	if got := PartitionKey("1D3378D3-5A3F-4712-85A1-2485495DFC4B"); got != refSub {
		t.Errorf("PartitionKey = %s", got)
	}
}

func TestResourceKindOfID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want Kind
	}{
		{refCluster, KindCluster},
		{refNodePool, KindNodePool},
		{refExtAuth, KindExternalAuth},
		{strings.ToLower(refNodePool), KindNodePool},
		{strings.ToUpper(refExtAuth), KindExternalAuth},
	} {
		k, id, err := ResourceKindOfID("externalId", tc.id)
		if err != nil || k != tc.want {
			t.Errorf("ResourceKindOfID(%s) = %v, %v; want %v", tc.id, k, err, tc.want)
			continue
		}
		if !strings.EqualFold(id.SubscriptionID, refSub) {
			t.Errorf("sub = %s", id.SubscriptionID)
		}
	}
	for _, bad := range []string{
		"",
		"not-an-id",
		"/subscriptions/" + refSub,
		refOperation,
		"/subscriptions/" + refSub + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm",
		// A look-alike type on an extension resource is not a node pool.
		"/subscriptions/" + refSub + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/nodePools/np",
	} {
		if _, _, err := ResourceKindOfID("externalId", bad); err == nil {
			t.Errorf("ResourceKindOfID(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), "externalId") || !strings.Contains(err.Error(), bad) {
			t.Errorf("ResourceKindOfID(%q) error %q does not name field and value", bad, err)
		}
	}
}

func TestResourceKind(t *testing.T) {
	for in, want := range map[string]Kind{
		"Microsoft.RedHatOpenShift/hcpOpenShiftClusters":               KindCluster,
		"microsoft.redhatopenshift/hcpopenshiftclusters":               KindCluster,
		"MICROSOFT.REDHATOPENSHIFT/HCPOPENSHIFTCLUSTERS/NODEPOOLS":     KindNodePool,
		"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths": KindExternalAuth,
	} {
		if got, err := ResourceKind(in); err != nil || got != want {
			t.Errorf("ResourceKind(%s) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "Microsoft.RedHatOpenShift/hcpOperationStatuses", "Microsoft.Resources/subscriptions"} {
		if _, err := ResourceKind(bad); err == nil || !strings.Contains(err.Error(), "resourceType") {
			t.Errorf("ResourceKind(%q) = %v, want an error naming resourceType", bad, err)
		}
	}
}

func TestParentClusterID(t *testing.T) {
	for _, id := range []string{refNodePool, refExtAuth} {
		got, err := ParentClusterID(id)
		if err != nil || got != refCluster {
			t.Errorf("ParentClusterID(%s) = %s, %v", id, got, err)
		}
	}
	if _, err := ParentClusterID(refCluster); err == nil {
		t.Error("ParentClusterID(cluster) accepted")
	}
	if _, err := ParentClusterID("junk"); err == nil || !strings.Contains(err.Error(), `"junk"`) {
		t.Errorf("ParentClusterID(junk) = %v", err)
	}
}

func TestOtherIDs(t *testing.T) {
	want := "/subscriptions/" + refSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationResults/" + refOpName
	if got := OperationResultID(refSub, "eastus", refOpName); got != want {
		t.Errorf("OperationResultID = %s", got)
	}
	if got := SubscriptionResourceID(refSub); got != "/subscriptions/"+refSub {
		t.Errorf("SubscriptionResourceID = %s", got)
	}
	for _, id := range []string{OperationResultID(refSub, "eastus", refOpName), SubscriptionResourceID(refSub), OperationID(refSub, "eastus", refOpName)} {
		if _, err := ParseResourceID("id", id); err != nil {
			t.Errorf("%s does not parse: %v", id, err)
		}
	}
	for k, want := range map[Kind]string{KindOther: "other", KindOperation: "operation", KindCluster: "cluster", KindNodePool: "node pool", KindExternalAuth: "external auth"} {
		if k.String() != want {
			t.Errorf("%d.String() = %s", k, k)
		}
	}
}

func TestCanonicalUUID(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"8A0F7C62-7A44-4A8E-9D8F-2F0D3E1C0B11", "8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11", true},
		{"8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11", "8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11", true},
		{"8a0f7c627a444a8e9d8f2f0d3e1c0b11", "", false},              // uuid.Parse accepts it; ARM never sends it
		{"{8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11}", "", false},        // braces
		{"urn:uuid:8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11", "", false}, // URN
		{"8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b1g", "", false},          // not hex
		{"../../etc/passwd/../../../../../../../aaaaa", "", false},   // 36 bytes of path
		{"", "", false},
	} {
		got, ok := CanonicalUUID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CanonicalUUID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSubscriptionOf(t *testing.T) {
	for id, want := range map[string]string{
		refCluster:                          refSub,
		"/SUBSCRIPTIONS/abc/resourceGroups": "abc",
		"/subscriptions/abc":                "abc",
		"/subscriptions/":                   "",
		"/subscriptions":                    "",
		"/resourceGroups/rg":                "",
		"":                                  "",
	} {
		if got := SubscriptionOf(id); got != want {
			t.Errorf("SubscriptionOf(%q) = %q, want %q", id, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = SubscriptionOf(refCluster) }); n != 0 {
		t.Errorf("SubscriptionOf allocates %v times, want 0", n)
	}
}

// CosmosID hashes in its own buffer: it must agree with uuid.NewSHA1 of
// the lowered ID, for ASCII, non-ASCII and IDs longer than its buffer.
func TestCosmosIDMatchesUUIDv5(t *testing.T) {
	for _, id := range []string{
		"",
		refCluster,
		strings.ToUpper(refNodePool),
		refCluster + "/nodePools/ÄÖÜ-İstanbul",
		refCluster + "/" + strings.Repeat("LongSegment/", 40),
		refCluster + "/" + strings.Repeat("Ä", 200),
	} {
		want := uuid.NewSHA1(cosmosIDNamespace, []byte(strings.ToLower(id))).String()
		if got := CosmosID(id); got != want {
			t.Errorf("CosmosID(%q) = %s, want %s", id, got, want)
		}
	}
}
