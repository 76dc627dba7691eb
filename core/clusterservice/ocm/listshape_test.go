package ocm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestListShapeIsEvidence: every list hcpops decides from (upgrade
// policies, versions, break-glass credentials, which end a revocation
// when none awaits it, the cluster search a create adopts by, inflight
// checks) is CS's word only in OCM's list shape. A gateway's
// 200 {} read as an empty list ("no policy", "no version offered") before;
// now any 200 without kind …List, page, size and total is an unrecognized
// answer, described and never quoted, and a real empty list is still empty.
func TestListShapeIsEvidence(t *testing.T) {
	href := cs.ClusterHref(clusterID(1))
	lists := []struct {
		name, kind string
		do         func(*Client) (int, error)
	}{
		{"control plane policies", "ControlPlaneUpgradePolicyList", func(c *Client) (int, error) {
			p, err := c.ListControlPlaneUpgradePolicies(context.Background(), href)
			return len(p), err
		}},
		{"node pool policies", "NodePoolUpgradePolicyList", func(c *Client) (int, error) {
			p, err := c.ListNodePoolUpgradePolicies(context.Background(), cs.NodePoolHref(href, "np1"))
			return len(p), err
		}},
		{"versions", "VersionList", func(c *Client) (int, error) {
			v, err := c.ListVersions(context.Background(), "")
			return len(v), err
		}},
		{"break-glass credentials", "BreakGlassCredentialList", func(c *Client) (int, error) {
			v, err := c.ListBreakGlassCredentials(context.Background(), href)
			return len(v), err
		}},
		{"cluster search", "ClusterList", func(c *Client) (int, error) {
			v, err := c.ListClusters(context.Background(), "name = 'c1'")
			return len(v), err
		}},
		{"inflight checks", "InflightCheckList", func(c *Client) (int, error) {
			v, err := c.GetInflightChecks(context.Background(), href)
			return len(v), err
		}},
	}
	for _, tc := range []struct {
		name  string
		body  func(kind string) string
		empty bool // a real empty list; otherwise no evidence
	}{
		{"OCM's empty list", func(k string) string { return fmt.Sprintf(`{"kind":%q,"page":1,"size":0,"total":0,"items":[]}`, k) }, true},
		{"{}", func(string) string { return "{}" }, false},
		{"empty body", func(string) string { return "" }, false},
		{"items only", func(string) string { return `{"items":[]}` }, false},
		{"another kind", func(string) string { return `{"kind":"Cluster","page":1,"size":0,"total":0,"items":[]}` }, false},
		{"no total", func(k string) string { return fmt.Sprintf(`{"kind":%q,"page":1,"size":0,"items":[]}`, k) }, false},
		{"gateway JSON", func(string) string { return `{"statusCode":200,"message":"OK"}` }, false},
	} {
		for _, l := range lists {
			t.Run(tc.name+"/"+l.name, func(t *testing.T) {
				body := tc.body(l.kind)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, body)
				}))
				defer srv.Close()
				n, err := l.do(connect(t, Config{URL: srv.URL}))
				if tc.empty {
					if err != nil || n != 0 {
						t.Fatalf("OCM's empty list = %d items, %v; want empty", n, err)
					}
					return
				}
				var u *cs.UnrecognizedAnswer
				if !errors.As(err, &u) || cs.Classify(err) != cs.Unrecognized || u.Status != http.StatusOK {
					t.Fatalf("a 200 %s = %d items, %v; want an unrecognized answer", body, n, err)
				}
				if len(body) > 2 && strings.Contains(err.Error(), body) {
					t.Errorf("error quotes the body: %v", err)
				}
			})
		}
	}
}
