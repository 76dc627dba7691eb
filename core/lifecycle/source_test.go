package lifecycle

import (
	"testing"

	"github.com/hcpops/hcpops/core/document"
)

// TestOpResourceRefIsResourceRef: the resource a tick reads for an
// operation, parsed or from the view's projection, is the one resourceRef
// names from its ids.
func TestOpResourceRefIsResourceRef(t *testing.T) {
	const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	cluster := "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c"
	for _, tc := range []struct {
		name, pk, externalID string
		ok                   bool
	}{
		{"own partition", sub, cluster, true},
		{"upper-case subscription", sub, "/subscriptions/1D3378D3-5A3F-4712-85A1-2485495DFC4B/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c", true},
		{"another partition", "00000000-0000-0000-0000-000000000000", cluster, false},
		{"no partition", "", cluster, false},
		{"no subscription", "", "/resourceGroups/rg", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantOK := resourceRef(tc.pk, tc.externalID)
			if wantOK != tc.ok {
				t.Fatalf("resourceRef = %v, %t; the case says %t", want, wantOK, tc.ok)
			}
			op := &document.OperationDocument{ID: "6e7906b8-195a-5089-af7d-ff5988327ebe", PartitionKey: tc.pk}
			op.Properties.ExternalID, op.Properties.Request = tc.externalID, document.RequestCreate
			projected, err := document.OperationFromProjection(op.AppendProjection(nil))
			if err != nil {
				t.Fatal(err)
			}
			for name, op := range map[string]*document.OperationDocument{"parsed": op, "projected": projected} {
				if got, ok := opResourceRef(op); got != want || ok != wantOK {
					t.Errorf("%s: opResourceRef = %v, %t; resourceRef = %v, %t", name, got, ok, want, wantOK)
				}
			}
		})
	}
}
