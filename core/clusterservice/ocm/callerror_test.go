package ocm

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestEveryCallFailsAsACallError: whatever fails in a Client method (here
// CS answers 500 to each request), the error is a *cs.CallError naming
// the method and its href and keeps CS's own error inside. A method added to cs.Client without a row fails.
func TestEveryCallFailsAsACallError(t *testing.T) {
	e := newEnv(t, Config{RetryLimit: 0, Timeout: defaultConfig().Timeout})
	cluster := e.readyCluster(t, 1)
	np, ea := cs.NodePoolHref(cluster, "np1"), cs.ExternalAuthHref(cluster, "ea1")
	cred := cluster + cs.BreakGlassSegment + "c1"
	bg := context.Background()
	calls := []struct {
		name, href string
		call       func() error
	}{
		{"ListClusters", cs.ClustersPath, func() error { _, err := e.client.ListClusters(bg, ""); return err }},
		{"PostCluster", cs.ClusterHref(clusterID(2)), func() error { _, err := e.client.PostCluster(bg, clusterSpec(2)); return err }},
		{"GetCluster", cluster, func() error { _, err := e.client.GetCluster(bg, cluster); return err }},
		{"GetClusterStatus", cluster, func() error { _, err := e.client.GetClusterStatus(bg, cluster); return err }},
		{"PatchCluster", cluster, func() error { _, err := e.client.PatchCluster(bg, cluster, cs.ClusterPatch{}); return err }},
		{"DeleteCluster", cluster, func() error { return e.client.DeleteCluster(bg, cluster) }},
		{"GetInflightChecks", cluster, func() error { _, err := e.client.GetInflightChecks(bg, cluster); return err }},
		{"PostNodePool", np, func() error {
			_, err := e.client.PostNodePool(bg, cluster, cs.NodePoolSpec{ID: "np1", VersionID: "openshift-v4.19.0", VMSize: "x"})
			return err
		}},
		{"GetNodePool", np, func() error { _, err := e.client.GetNodePool(bg, np); return err }},
		{"GetNodePoolStatus", np, func() error { _, err := e.client.GetNodePoolStatus(bg, np); return err }},
		{"PatchNodePool", np, func() error { _, err := e.client.PatchNodePool(bg, np, cs.NodePoolPatch{}); return err }},
		{"DeleteNodePool", np, func() error { return e.client.DeleteNodePool(bg, np) }},
		{"PostExternalAuth", ea, func() error {
			_, err := e.client.PostExternalAuth(bg, cluster, cs.ExternalAuthSpec{ID: "ea1", IssuerURL: "https://issuer"})
			return err
		}},
		{"GetExternalAuth", ea, func() error { _, err := e.client.GetExternalAuth(bg, ea); return err }},
		{"PatchExternalAuth", ea, func() error { _, err := e.client.PatchExternalAuth(bg, ea, cs.ExternalAuthSpec{}); return err }},
		{"DeleteExternalAuth", ea, func() error { return e.client.DeleteExternalAuth(bg, ea) }},
		{"PostBreakGlassCredential", cluster, func() error { _, err := e.client.PostBreakGlassCredential(bg, cluster); return err }},
		{"GetBreakGlassCredential", cred, func() error { _, err := e.client.GetBreakGlassCredential(bg, cred); return err }},
		{"ListBreakGlassCredentials", cluster, func() error { _, err := e.client.ListBreakGlassCredentials(bg, cluster); return err }},
		{"DeleteBreakGlassCredentials", cluster, func() error { return e.client.DeleteBreakGlassCredentials(bg, cluster) }},
		{"ListClustersByHref", cluster, func() error { _, err := e.client.ListClustersByHref(bg, []string{cluster}); return err }},
		{"ListNodePoolsByHref", cluster, func() error { _, err := e.client.ListNodePoolsByHref(bg, cluster, []string{np}); return err }},
		{"ListExternalAuthsByHref", cluster, func() error {
			_, err := e.client.ListExternalAuthsByHref(bg, cluster, []string{ea})
			return err
		}},
		{"ListVersions", "/api/aro_hcp/v1alpha1/versions", func() error { _, err := e.client.ListVersions(bg, ""); return err }},
		{"ListControlPlaneUpgradePolicies", cluster, func() error {
			_, err := e.client.ListControlPlaneUpgradePolicies(bg, cluster)
			return err
		}},
		{"PostControlPlaneUpgradePolicy", cluster, func() error {
			_, err := e.client.PostControlPlaneUpgradePolicy(bg, cluster, "4.21.20")
			return err
		}},
		{"ListNodePoolUpgradePolicies", np, func() error { _, err := e.client.ListNodePoolUpgradePolicies(bg, np); return err }},
		{"PostNodePoolUpgradePolicy", np, func() error { _, err := e.client.PostNodePoolUpgradePolicy(bg, np, "4.20.10"); return err }},
	}
	if n := reflect.TypeFor[cs.Client]().NumMethod(); n != len(calls) {
		t.Fatalf("%d rows for the %d methods of cs.Client", len(calls), n)
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			if err := e.sim.FailNext(1, http.StatusInternalServerError); err != nil {
				t.Fatal(err)
			}
			err := tc.call()
			var ce *cs.CallError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is no *cs.CallError", err, err)
			}
			if ce.Call != tc.name || ce.Href != tc.href || ce.Elapsed <= 0 {
				t.Errorf("CallError = {%s %s %s}, want {%s %s} and a duration", ce.Call, ce.Href, ce.Elapsed, tc.name, tc.href)
			}
			if se := (*cs.Error)(nil); !errors.As(err, &se) || se.Status != http.StatusInternalServerError {
				t.Errorf("error %v does not carry CS's 500", err)
			}
			if ce.Error() != ce.Err.Error() {
				t.Errorf("message %q is not the cause's %q", ce.Error(), ce.Err.Error())
			}
		})
	}
}
