package clusterservice

import (
	"strings"
	"testing"
)

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

// TestParseHrefAllocatesNothing: a tick sorts every poll's hrefs, so the
// cluster href handed back is part of href, not a copy.
func TestParseHrefAllocatesNothing(t *testing.T) {
	href := "/api/aro_hcp/v1alpha1/clusters/abc/node_pools/np1"
	if n := testing.AllocsPerRun(100, func() { ParseHref(href) }); n != 0 {
		t.Errorf("ParseHref allocates %v times", n)
	}
}

func TestValidChildID(t *testing.T) {
	for id, want := range map[string]bool{
		"np1": true, "a": true, "a-b": true, strings.Repeat("x", 63): true,
		"": false, "-a": false, "a-": false, "A": false, "a_b": false, strings.Repeat("x", 64): false,
	} {
		if got := ValidChildID(id); got != want {
			t.Errorf("ValidChildID(%q) = %v, want %v", id, got, want)
		}
	}
}
