package simulator

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// step is one request of the transcript, or (with advance set) a clock move
// or a scenario control.
type step struct {
	method, path, body string
	advance            time.Duration
	control            func(*testing.T, *testSim)
}

// TestWireTranscript replays a whole life of a cluster and its children,
// with the refusals along the way, and compares every status, header that
// matters and body byte with testdata/transcript.golden. The simulator is
// seeded and the clock is fake, so the transcript is exact: any change to
// what the simulator sends shows here (go test -update rewrites it).
func TestWireTranscript(t *testing.T) {
	s := startSim(t)
	c := clusterPath(testID)
	np := c + "/node_pools"
	ea := c + "/external_auth_config/external_auths"
	bg := credsPath(testID)
	minutes := func(n int) step { return step{advance: time.Duration(n) * time.Minute} }
	ctl := func(f func(*testing.T, *testSim)) step { return step{control: f} }

	steps := []step{
		{method: "GET", path: clustersPath},
		{method: "POST", path: clustersPath, body: `{`},
		{method: "POST", path: clustersPath, body: ``},
		{method: "POST", path: clustersPath, body: `{"name":"x"}`},
		{method: "POST", path: clustersPath, body: fixture(t, "cluster.json")},
		{method: "POST", path: clustersPath, body: fixture(t, "cluster.json")},
		{method: "GET", path: c},
		{method: "GET", path: c + "/status"},
		{method: "GET", path: c + "/inflight_checks"},
		{method: "PATCH", path: c, body: `{"kind":"Cluster"}`},
		{method: "POST", path: np, body: fixture(t, "nodepool.json")},
		{method: "GET", path: np},
		{method: "POST", path: bg},
		minutes(1),
		{method: "GET", path: c + "/inflight_checks"},
		minutes(2),
		{method: "GET", path: c},
		{method: "GET", path: clustersPath + "?search=name+%3D+'dev-cluster'"},
		{method: "GET", path: clustersPath + "?search=name+%3D+x"},
		{method: "GET", path: clustersPath + "?page=0"},
		{method: "GET", path: clustersPath + "?page=2&size=1"},
		{method: "PATCH", path: c, body: `{"id":"other"}`},
		{method: "PATCH", path: c, body: `{"node_drain_grace_period":{"unit":"days","value":1}}`},
		{method: "PATCH", path: c, body: `{"node_drain_grace_period":{"unit":"hours","value":2},` +
			`"api":{"cidr_block_access":{"allow":{"mode":"allow_list","values":["10.0.0.0/8"]}}}}`},
		{method: "PATCH", path: c, body: `{"api":{"cidr_block_access":{"allow":{"mode":"allow_list","values":["nope"]}}}}`},
		{method: "GET", path: c + "/status"},
		minutes(1),

		// Node pools.
		ctl(func(t *testing.T, s *testSim) {
			if _, err := s.FailNodePool(testID, "np2", NodePoolFailure{Message: "quota"}); err != nil {
				t.Fatalf("FailNodePool: %v", err)
			}
		}),
		{method: "POST", path: np, body: `{"id":"NP_1"}`},
		{method: "POST", path: np, body: `{"id":"np1","replicas":-1}`},
		{method: "POST", path: np, body: fixture(t, "nodepool.json")},
		{method: "POST", path: np, body: fixture(t, "nodepool.json")},
		{method: "POST", path: np, body: `{"id":"np2","replicas":2}`},
		{method: "GET", path: np + "/np1"},
		{method: "GET", path: np + "/np1/status"},
		{method: "GET", path: np + "/np9"},
		{method: "GET", path: np + "?size=1&page=2"},
		{method: "PATCH", path: np + "/np1", body: `{"replicas":5}`},
		minutes(3),
		{method: "GET", path: np + "/np2/status"},
		{method: "PATCH", path: np + "/np2", body: `{"replicas":5}`},
		{method: "PATCH", path: np + "/np1", body: `{"id":"np7"}`},
		{method: "PATCH", path: np + "/np1", body: `{"replicas":-5}`},
		{method: "PATCH", path: np + "/np1", body: `{"replicas":4,"labels":{"team":"b"}}`},
		{method: "GET", path: np + "/np1"},
		minutes(1),
		{method: "DELETE", path: np + "/np2"},
		{method: "DELETE", path: np + "/np2"},
		{method: "GET", path: np + "/np2/status"},
		minutes(1),
		{method: "GET", path: np + "/np2"},

		// External auths.
		ctl(func(t *testing.T, s *testSim) {
			if _, err := s.FailExternalAuth(testID, "bad", ExternalAuthFailure{Message: "no keys"}); err != nil {
				t.Fatalf("FailExternalAuth: %v", err)
			}
		}),
		{method: "POST", path: ea, body: `{"id":"entra"}`},
		{method: "POST", path: ea, body: `{"id":"entra","issuer":{"url":"http://x"}}`},
		{method: "POST", path: ea, body: fixture(t, "externalauth.json")},
		{method: "POST", path: ea, body: fixture(t, "externalauth.json")},
		{method: "POST", path: ea, body: `{"id":"bad","issuer":{"url":"https://issuer.example"}}`},
		{method: "GET", path: ea},
		{method: "GET", path: ea + "/bad"},
		{method: "GET", path: ea + "/x"},
		{method: "PATCH", path: ea + "/bad", body: `{"issuer":{"url":"http://x"}}`},
		{method: "PATCH", path: ea + "/bad", body: `{"id":"other"}`},
		{method: "PATCH", path: ea + "/bad", body: `{"issuer":{"audiences":["a","b"],"ca":"pem"}}`},
		{method: "DELETE", path: ea + "/bad"},
		{method: "PATCH", path: ea + "/bad", body: `{"issuer":{"ca":"pem2"}}`},
		{method: "DELETE", path: ea + "/bad"},
		minutes(1),
		{method: "GET", path: ea + "/bad"},

		// Break-glass credentials.
		{method: "POST", path: bg, body: `{"kind":`},
		{method: "POST", path: bg},
		{method: "POST", path: bg, body: `{"kind":"BreakGlassCredential"}`},
		{method: "GET", path: bg},
		minutes(1),
		{method: "GET", path: bg + "?size=1"},
		{method: "GET", path: bg + "/b1"},
		{method: "DELETE", path: bg},
		{method: "DELETE", path: bg},
		{method: "POST", path: bg},
		minutes(1),
		{method: "GET", path: bg},

		// Deletion cascades to children and refuses changes under it.
		{method: "DELETE", path: c},
		{method: "DELETE", path: c},
		{method: "GET", path: c},
		{method: "GET", path: np},
		{method: "POST", path: np, body: `{"id":"np3"}`},
		{method: "PATCH", path: np + "/np1", body: `{"replicas":1}`},
		{method: "DELETE", path: np + "/np1"},
		{method: "POST", path: ea, body: `{"id":"e2","issuer":{"url":"https://i.example"}}`},
		{method: "PATCH", path: ea + "/entra", body: `{}`},
		{method: "DELETE", path: ea + "/entra"},
		{method: "PATCH", path: c, body: `{}`},
		minutes(1),
		{method: "GET", path: c},
		{method: "GET", path: np},
		{method: "DELETE", path: c},
		{method: "GET", path: clustersPath},

		// A failed cluster.
		ctl(func(t *testing.T, s *testSim) {
			if _, err := s.FailCluster("second", ClusterFailure{Code: "OCM4001", FailedChecks: 1}); err != nil {
				t.Fatalf("FailCluster: %v", err)
			}
		}),
		{method: "POST", path: clustersPath, body: strings.NewReplacer(testID, "second", "dev-cluster", "second").
			Replace(fixture(t, "cluster.json"))},
		minutes(2),
		{method: "GET", path: clusterPath("second") + "/status"},
		{method: "GET", path: clusterPath("second") + "/inflight_checks"},
		{method: "POST", path: clusterPath("second") + "/node_pools", body: `{"id":"np1"}`},
		{method: "GET", path: "/api/aro_hcp/v1alpha1/nowhere"},
	}

	var out bytes.Buffer
	for i, st := range steps {
		switch {
		case st.advance != 0:
			s.clock.Advance(st.advance)
			fmt.Fprintf(&out, "# +%s\n\n", st.advance)
			continue
		case st.control != nil:
			st.control(t, s)
			continue
		}
		r := s.do(t, st.method, st.path, st.body)
		fmt.Fprintf(&out, "%d %s %s\n%d", i, st.method, st.path, r.status)
		for _, h := range []string{"Content-Type", "X-Operation-Id", "Retry-After"} {
			if v := r.header.Get(h); v != "" {
				fmt.Fprintf(&out, " %s=%s", h, v)
			}
		}
		out.WriteByte('\n')
		if len(r.body) > 0 {
			if err := json.Indent(&out, r.body, "", "  "); err != nil {
				t.Fatalf("step %d %s %s: body is not JSON: %v\n%s", i, st.method, st.path, err, r.body)
			}
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
	}

	path := filepath.Join("testdata", "transcript.golden")
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the wire transcript differs from %s (go test -update rewrites it); first difference:\n%s",
			path, firstDifference(want, out.Bytes()))
	}
}

// firstDifference shows the first differing line with a little context.
func firstDifference(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant: %s\ngot:  %s", i+1, wl, gl)
		}
	}
	return "(same lines, different bytes)"
}
