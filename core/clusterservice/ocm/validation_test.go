package ocm

import (
	"errors"
	"strings"
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestBadInputNeverReachesCS: malformed hrefs and specs fail locally with
// an error naming the field and value, and no request is sent.
func TestBadInputNeverReachesCS(t *testing.T) {
	e := newEnv(t, defaultConfig())
	c := e.client
	ctx := e.ctx
	good := cs.ClusterHref(clusterID(1))
	npHref := cs.NodePoolHref(good, "np1")
	bad := func(mut func(*cs.ClusterSpec)) cs.ClusterSpec {
		s := clusterSpec(1)
		mut(&s)
		return s
	}
	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"empty cluster href", func() error { _, err := c.GetCluster(ctx, ""); return err },
			[]string{"cluster href", `""`}},
		{"dotted cluster href", func() error { _, err := c.GetClusterStatus(ctx, good+"/../x"); return err },
			[]string{"cluster href", good + "/../x"}},
		{"foreign prefix", func() error { _, err := c.PostNodePool(ctx, "/api/other/clusters/x", nodePoolSpec()); return err },
			[]string{"cluster href", "/api/other/clusters/x"}},
		{"node pool href that is a cluster", func() error { _, err := c.GetNodePool(ctx, good); return err },
			[]string{"node pool href", good}},
		{"external auth href that is a node pool", func() error { _, err := c.GetExternalAuth(ctx, npHref); return err },
			[]string{"external auth href", npHref}},
		{"credential href without id", func() error {
			_, err := c.GetBreakGlassCredential(ctx, cs.ClustersMgmtPrefix+"/clusters/x/break_glass_credentials/")
			return err
		}, []string{"break-glass credential href"}},
		{"query in href", func() error { return c.DeleteCluster(ctx, good+"?x=1") }, []string{"cluster href"}},
		{"short cluster id", func() error { _, err := c.PostCluster(ctx, bad(func(s *cs.ClusterSpec) { s.ID = "abc" })); return err },
			[]string{"cluster spec ID", `"abc"`}},
		{"cluster id out of alphabet", func() error {
			_, err := c.PostCluster(ctx, bad(func(s *cs.ClusterSpec) { s.ID = strings.Repeat("z", 32) }))
			return err
		}, []string{"cluster spec ID"}},
		{"cluster without name", func() error { _, err := c.PostCluster(ctx, bad(func(s *cs.ClusterSpec) { s.Name = "" })); return err },
			[]string{"cluster spec Name"}},
		{"cluster without resource name", func() error {
			_, err := c.PostCluster(ctx, bad(func(s *cs.ClusterSpec) { s.Azure.ResourceName = "" }))
			return err
		}, []string{"Azure.ResourceName"}},
		{"negative drain", func() error {
			_, err := c.PatchCluster(ctx, good, cs.ClusterPatch{NodeDrainGracePeriodMinutes: intp(-1)})
			return err
		}, []string{"NodeDrainGracePeriodMinutes", "-1"}},
		{"upper-case node pool id", func() error {
			_, err := c.PostNodePool(ctx, good, cs.NodePoolSpec{ID: "NP1", Replicas: 1})
			return err
		}, []string{"node pool spec ID", `"NP1"`}},
		{"negative replicas", func() error {
			_, err := c.PostNodePool(ctx, good, cs.NodePoolSpec{ID: "np1", Replicas: -2})
			return err
		}, []string{"Replicas", "-2"}},
		{"negative patch replicas", func() error {
			_, err := c.PatchNodePool(ctx, npHref, cs.NodePoolPatch{Replicas: intp(-1)})
			return err
		}, []string{"Replicas", "-1"}},
		{"external auth without issuer", func() error {
			_, err := c.PostExternalAuth(ctx, good, cs.ExternalAuthSpec{ID: "entra"})
			return err
		}, []string{"IssuerURL"}},
		{"external auth patch for another id", func() error {
			_, err := c.PatchExternalAuth(ctx, cs.ExternalAuthHref(good, "entra"), cs.ExternalAuthSpec{ID: "okta"})
			return err
		}, []string{`"okta"`, `"entra"`}},
		{"credentials of a node pool", func() error { return c.DeleteBreakGlassCredentials(ctx, npHref) },
			[]string{"cluster href", npHref}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			var ce *cs.Error
			if errors.As(err, &ce) {
				t.Errorf("local validation error looks like a CS error: %v", err)
			}
		})
	}
	if n := e.sim.Ledger().Total(); n != 0 {
		t.Errorf("%d requests reached CS, want none: %+v", n, e.sim.Ledger().ByPath)
	}
}

func TestParseHrefs(t *testing.T) {
	cases := []struct {
		href, segment string
		cluster, id   string
		ok            bool
	}{
		{cs.ClusterHref("abc"), "", "abc", "", true},
		{cs.ClustersMgmtPrefix + "/clusters/abc", "", "abc", "", true},
		{cs.ClusterHref("abc") + "/", "", "", "", false},
		{cs.ClusterHref("a/b"), "", "", "", false},
		{cs.NodePoolHref(cs.ClusterHref("c1"), "np1"), cs.NodePoolsSegment, "c1", "np1", true},
		{cs.ExternalAuthHref(cs.ClusterHref("c1"), "e-1"), cs.ExternalAuthsSegment, "c1", "e-1", true},
		{cs.ClustersMgmtPrefix + "/clusters/c1/break_glass_credentials/b1", cs.BreakGlassSegment, "c1", "b1", true},
		{cs.NodePoolHref(cs.ClusterHref("c1"), "np1/status"), cs.NodePoolsSegment, "", "", false},
		{cs.NodePoolHref(cs.ClusterHref("c1"), ""), cs.NodePoolsSegment, "", "", false},
	}
	for _, tc := range cases {
		var cluster, id string
		var err error
		if tc.segment == "" {
			cluster, err = parseCluster("href", tc.href)
		} else {
			cluster, id, err = parseChild("href", tc.href, tc.segment)
		}
		if (err == nil) != tc.ok || cluster != tc.cluster || id != tc.id {
			t.Errorf("parse %q = %q %q %v; want %q %q ok=%v", tc.href, cluster, id, err, tc.cluster, tc.id, tc.ok)
		}
	}
}
