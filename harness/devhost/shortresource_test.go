package devhost

import "testing"

// The terminal names a resource by kind and its path below the cluster, in
// whatever case ARM spelled the type.
func TestShortResource(t *testing.T) {
	for in, want := range map[string]string{
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1":                  "cluster c1",
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1/nodePools/np1":    "nodepool c1/np1",
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/rg/providers/microsoft.redhatopenshift/HCPOPENSHIFTCLUSTERS/c1/externalAuths/ea": "externalauth c1/ea",
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1":                                                     "cluster c1",
		"not an id": "not an id",
	} {
		if got := shortResource(in); got != want {
			t.Errorf("%s = %q want %q", in, got, want)
		}
	}
}
