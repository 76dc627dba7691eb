package ocm

import (
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestObjectsCarryTheirVersion: a cluster and a node pool read back (GET
// and list) name the version CS runs them at, as a raw id, which is what
// an update's poll compares with the version the resource asks for.
func TestObjectsCarryTheirVersion(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	if _, err := e.client.PostNodePool(e.ctx, ch, nodePoolSpec()); err != nil {
		t.Fatalf("PostNodePool: %v", err)
	}
	c, err := e.client.GetCluster(e.ctx, ch)
	if err != nil || c.Version != "4.19.0" {
		t.Errorf("GetCluster version = %q, %v; want 4.19.0", c.Version, err)
	}
	listed, err := e.client.ListClustersByHref(e.ctx, []string{ch})
	if err != nil || listed[ch].Version != "4.19.0" {
		t.Errorf("ListClustersByHref version = %q, %v; want 4.19.0", listed[ch].Version, err)
	}
	np, err := e.client.GetNodePool(e.ctx, cs.NodePoolHref(ch, "np1"))
	if err != nil || np.Version != "4.19.0" {
		t.Errorf("GetNodePool version = %q, %v; want 4.19.0", np.Version, err)
	}
}

func TestRawVersion(t *testing.T) {
	for _, tc := range []struct{ id, raw, group, want string }{
		{"openshift-v4.21.20", "4.21.20", "stable", "4.21.20"},
		{"openshift-v4.21.20", "", "stable", "4.21.20"},
		{"openshift-v4.22.1-candidate", "", "candidate", "4.22.1"},
		{"4.20", "", "", "4.20"},
		{"openshift-v4.22.1-candidate", "", "", "4.22.1"},
		{"openshift-v4.21.0-rc.1", "", "", "4.21.0-rc.1"},
		{"", "", "", ""},
	} {
		if got := cs.RawVersion(tc.id, tc.raw, tc.group); got != tc.want {
			t.Errorf("RawVersion(%q, %q, %q) = %q, want %q", tc.id, tc.raw, tc.group, got, tc.want)
		}
	}
}
