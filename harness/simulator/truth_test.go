package simulator

import (
	"net/http"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Truth is what CS holds, read behind every fault and without a request:
// a simulation's oracle judges each terminal write by it.
func TestTruth(t *testing.T) {
	s := startSim(t)
	if got := s.Truth(); len(got) != 0 {
		t.Fatalf("an empty CS holds %d objects", len(got))
	}
	for _, r := range []struct{ path, body string }{
		{clustersPath, fixture(t, "cluster.json")},
		{clusterPath(testID) + "/node_pools", fixture(t, "nodepool.json")},
		{clusterPath(testID) + "/external_auth_config/external_auths", fixture(t, "externalauth.json")},
	} {
		if resp := s.do(t, http.MethodPost, r.path, r.body); resp.status != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", r.path, resp.status, resp.body)
		}
	}
	before := s.Ledger().Count(http.MethodGet, cs.ClustersPath+"/{id}")
	truth := s.Truth()
	if s.Ledger().Count(http.MethodGet, cs.ClustersPath+"/{id}") != before {
		t.Fatal("reading the truth was recorded as a request")
	}
	c, ok := truth[clusterPath(testID)]
	if !ok || c.Kind != KindCluster || c.State != cs.ClusterStateValidating || c.Azure.ResourceName == "" || c.Version == "" {
		t.Fatalf("cluster truth = %+v (found %v), want a validating cluster with its Azure resource and version", c, ok)
	}
	var np Object
	for href, o := range truth {
		if o.Kind == KindNodePool {
			np = o
			if o.Cluster != clusterPath(testID) || href != o.Href {
				t.Fatalf("node pool truth %+v under %s", o, href)
			}
		}
	}
	if np.Replicas == 0 || np.Name == "" {
		t.Fatalf("node pool truth = %+v, want its replicas and name", np)
	}
	s.do(t, http.MethodDelete, clusterPath(testID), "")
	s.clock.Advance(2 * time.Minute)
	if got := s.Truth(); len(got) != 0 {
		t.Fatalf("after its uninstall CS still holds %v", got)
	}
}
