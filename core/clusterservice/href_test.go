package clusterservice

import "testing"

func TestParseHref(t *testing.T) {
	const c = "/api/aro_hcp/v1alpha1/clusters/abc"
	const m = "/api/clusters_mgmt/v1/clusters/abc"
	cases := []struct {
		href    string
		kind    HrefKind
		cluster string
	}{
		{c, HrefCluster, c},
		{m, HrefCluster, m},
		{c + "/node_pools/np1", HrefNodePool, c},
		{m + "/node_pools/np1", HrefNodePool, m},
		{c + "/external_auth_config/external_auths/entra", HrefExternalAuth, c},
		{m + "/break_glass_credentials/bg1", HrefOther, ""},
		{c + "/node_pools/", HrefOther, ""},
		{c + "/node_pools/np1/status", HrefOther, ""},
		{c + "/status", HrefOther, ""},
		{"/api/aro_hcp/v1alpha1/clusters/", HrefOther, ""},
		{"/api/aro_hcp/v1alpha1/node_pools/np1", HrefOther, ""},
		{"", HrefOther, ""},
	}
	for _, tc := range cases {
		kind, cluster := ParseHref(tc.href)
		if kind != tc.kind || cluster != tc.cluster {
			t.Errorf("ParseHref(%q) = %v, %q; want %v, %q", tc.href, kind, cluster, tc.kind, tc.cluster)
		}
	}
}
