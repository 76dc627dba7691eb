package ocm

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// simulatorNodePoolPage creates a cluster with n node pools in the
// simulator and returns its page of them as sent.
func simulatorNodePoolPage(t testing.TB, n int) []byte {
	t.Helper()
	e := newEnv(t, defaultConfig())
	c, err := e.client.PostCluster(e.ctx, clusterSpec(1))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(3 * time.Minute)
	for i := range n {
		spec := nodePoolSpec()
		spec.ID = fmt.Sprintf("np%d", i)
		if _, err := e.client.PostNodePool(e.ctx, c.Href, spec); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Minute) // each in another phase
	}
	resp, err := http.Get(fmt.Sprintf("%s%s/node_pools?size=%d", e.url, c.Href, n))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing the simulator's node pools: %s, %v", resp.Status, err)
	}
	return body
}

var nodePoolPageUsed = pageUsed(used{"kind": nil, "id": nil, "href": nil, "replicas": nil, "labels": nil,
	"status":  {"kind": nil, "current_replicas": nil, "message": nil, "state": {"value": nil}},
	"version": versionUsed,
})

func TestWireReadsTheSimulatorsNodePoolPages(t *testing.T) {
	body := simulatorNodePoolPage(t, 3)
	if !sameAsSDK(t, body, nodePoolReaders, nodePoolPageUsed) {
		t.Fatalf("the wire reader gave up on the simulator's page:\n%s", body)
	}
	p, _ := wirePage(body, wireNodePool)
	if len(p.items) != 3 {
		t.Fatalf("%d node pools read; want 3", len(p.items))
	}
	for _, it := range p.items {
		if it.np.Replicas != 3 || it.np.Labels["team"] != "a" || it.np.Version == "" || !it.inline {
			t.Fatalf("node pool read as %+v", it)
		}
	}
}

func TestWireReadsOrGivesUpOnNodePools(t *testing.T) {
	item := func(members string) string {
		return `{"kind":"NodePoolList","page":1,"size":1,"total":1,"items":[{"kind":"NodePool","id":"np1"` + members + `}]}`
	}
	for _, tc := range []struct {
		name, body string
		reads      bool
	}{
		{"plain", item(`,"replicas":2,"status":{"kind":"NodePoolStatus","state":{"value":"ready"},"current_replicas":2,"message":"m"}`), true},
		{"status link", item(`,"status":{"kind":"NodePoolStatusLink","state":{"value":"ready"}}`), true},
		{"no state value", item(`,"status":{"state":{"last_updated_timestamp":"2026-01-01T00:00:00Z"}}`), true},
		{"labels", item(`,"labels":{"a":"1","b":""}`), true},
		{"no labels", item(`,"labels":{}`), true},
		{"version", item(`,"version":{"id":"openshift-v4.19.0","channel_group":"stable"}`), true},
		{"no href", item(``), true},

		{"negative replicas", item(`,"replicas":-1`), false},
		{"a label twice", item(`,"labels":{"a":"1","a":"2"}`), false},
		{"an empty label name", item(`,"labels":{"":"1"}`), false},
		{"a label that is no string", item(`,"labels":{"a":1}`), false},
		{"a node pool link", `{"items":[{"kind":"NodePoolLink","id":"np1"}]}`, false},
		{"a state that is a string", item(`,"status":{"state":"ready"}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameAsSDK(t, []byte(tc.body), nodePoolReaders, nodePoolPageUsed); got != tc.reads {
				t.Fatalf("the wire reader read the page: %v; want %v", got, tc.reads)
			}
		})
	}
}

// FuzzNodePoolPage: whatever page the wire reader reads, the SDK reads
// the same.
func FuzzNodePoolPage(f *testing.F) {
	f.Add(simulatorNodePoolPage(f, 2))
	f.Add([]byte(`{"items":[{"id":"np1","replicas":1,"labels":{"a":"b"},"status":{"kind":"NodePoolStatusLink","state":{"value":"ready"}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsSDK(t, body, nodePoolReaders, nodePoolPageUsed)
	})
}
