package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
)

// duplicateReady lists every cluster twice, the second copy ready: the
// lie that made creates Succeeded while CS's own GET said installing.
func duplicateReady(status int, body []byte) (int, string, []byte) {
	var page map[string]json.RawMessage
	var items []map[string]any
	if json.Unmarshal(body, &page) != nil || json.Unmarshal(page["items"], &items) != nil {
		return status, "", body
	}
	for _, it := range append([]map[string]any(nil), items...) {
		b, _ := json.Marshal(it)
		var dup map[string]any
		_ = json.Unmarshal(b, &dup)
		dup["state"] = "ready"
		if st, ok := dup["status"].(map[string]any); ok {
			st["state"] = "ready"
		}
		items = append(items, dup)
	}
	page["items"], _ = json.Marshal(items)
	page["size"], _ = json.Marshal(len(items))
	out, _ := json.Marshal(page)
	return status, "", out
}

func clusterLists(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == cs.ClustersPath
}

// TestLyingListMakesNoVerdict: a cluster list that names each asked id
// twice with conflicting states is no evidence: the tick logs it once with
// the call and reads each cluster with its own GET, which says
// installing, so no create is marked Succeeded (nor ARM notified).
func TestLyingListMakesNoVerdict(t *testing.T) {
	r, p := newProxiedRig(t)
	d := simulator.DefaultDurations()
	for _, n := range d.Names() {
		if err := d.Set(n, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	r.Sim.SetDurations(d) // CS's own GET says installing for a while
	ctx := context.Background()
	var ops []*document.OperationDocument
	for _, name := range []string{"l1", "l2", "l3"} {
		ops = append(ops, r.accepted(r.fe.PutCluster(ctx, clusterRID(name), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, r.opts())))
	}
	provisioning := func() bool {
		for _, op := range ops {
			if r.op(op.Name()).Properties.Status != arm.ProvisioningStateProvisioning {
				return false
			}
		}
		return true
	}
	for round := 0; ; round++ {
		r.deliver()
		r.invoke("/pollOperations", r.tickPayload)
		if provisioning() {
			break
		}
		if round == 20 {
			t.Fatalf("the creates never reached Provisioning: %s", r.op(ops[0].Name()).Properties.Status)
		}
		r.Sim.Advance(time.Minute)
	}
	before := len(r.Logs.String())
	p.set(clusterLists, duplicateReady)
	if status := r.invoke("/pollOperations", r.tickPayload); status != http.StatusOK {
		t.Fatalf("tick: %d", status)
	}
	for _, op := range ops {
		if got := r.op(op.Name()).Properties.Status; got != arm.ProvisioningStateProvisioning {
			t.Errorf("operation %s: %s after a lying list, want Provisioning (CS's GET says installing)", op.Name(), got)
		}
	}
	logs := r.Logs.String()[before:]
	if n := strings.Count(logs, "batched clusters service read failed"); n != 1 ||
		!strings.Contains(logs, "listed twice with different content") || !strings.Contains(logs, `"cs_call":"ListClustersByHref"`) {
		t.Errorf("want one Warn line naming the call and the inconsistency, got %d:\n%s", n, logs)
	}
}
