package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/hang"
)

// TestHungClustersServiceThroughTheHandler reproduces a run against a
// Clusters Service that hangs on some objects, with that run's settings,
// through the real handler: poll concurrency 2, no CS
// retries, six dispatched cluster creates, the first two polled hang.
// Before the fix the tick ended at its budget with errors=0 and all six
// Accepted; now the healthy four finish in the first tick, the two hung
// ones are counted as errors, and the next tick backs them off.
func TestHungClustersServiceThroughTheHandler(t *testing.T) {
	var cs *hang.Proxy
	r := apptest.New(t, apptest.Options{Settings: func(simURL string) map[string]string {
		cs = hang.NewProxy(t, simURL)
		return map[string]string{
			"CLUSTERS_SERVICE_URL":     cs.URL,
			"CLUSTERS_SERVICE_TIMEOUT": "300ms",
			"HCPOPS_POLL_CONCURRENCY":  "2",
			"HCPOPS_POLL_BUDGET":       "8s",
		}
	}})
	ctx := context.Background()
	var items []store.Item
	names := map[string]string{} // operation name -> cluster resource ID
	for i := range 6 {
		rid := fmt.Sprintf("/subscriptions/%s/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c%d", sub, i)
		fe := frontend.New(r.App.Store, clock.Real{}, uuid.NewString)
		acc, err := fe.PutCluster(ctx, rid, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"},
			frontend.Options{TenantID: tenant})
		if err != nil {
			t.Fatal(err)
		}
		names[acc.Operation.Name()] = rid
		item, err := r.App.Store.Get(ctx, sub, acc.Operation.ID)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, item)
	}
	documents, err := triggerhost.EncodeDocuments(items)
	if err != nil {
		t.Fatal(err)
	}
	batch := fmt.Appendf(nil, `{"Data":{"documents":%s},"Metadata":{}}`, documents)
	if resp, body := r.Post("/dispatchOperations", batch); resp.StatusCode != http.StatusOK {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	r.Sim.Advance(10 * time.Minute) // every cluster is ready in CS

	// The first two operations the tick meets hang.
	var order []string
	err = r.App.Store.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: 100}, func(page []store.Item) error {
		for _, it := range page {
			op, err := document.ParseOperation(it.Body)
			if err != nil {
				return err
			}
			order = append(order, op.Name())
		}
		return nil
	})
	if err != nil || len(order) != 6 {
		t.Fatalf("active operations %v, %v", order, err)
	}
	status := func(name string) arm.ProvisioningState {
		item, err := r.App.Store.Get(ctx, sub, document.CosmosID(document.OperationResourceID(sub, name)))
		if err != nil {
			t.Fatal(err)
		}
		op, err := document.ParseOperation(item.Body)
		if err != nil {
			t.Fatal(err)
		}
		return op.Properties.Status
	}
	res := func(name string) *document.Resource {
		item, err := r.App.Store.Get(ctx, sub, document.CosmosID(names[name]))
		if err != nil {
			t.Fatal(err)
		}
		d, err := document.ParseResource(item.Body)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, n := range order[:2] {
		href := res(n).ClusterServiceID()
		cs.Hang(href[strings.LastIndex(href, "/")+1:])
	}

	tick := readFile(t, "../events/testdata/tick.json")
	resp, body := r.Post("/pollOperations", tick)
	rec := r.Logs.Named(t, "poll.tick", 1)[0]
	if resp.StatusCode != http.StatusOK || rec["polled"] != 6.0 || rec["changed"] != 4.0 || rec["errors"] != 2.0 {
		t.Fatalf("tick 1: %d %s, record %v", resp.StatusCode, body, rec)
	}
	for i, n := range order {
		want := arm.ProvisioningStateSucceeded
		if i < 2 {
			want = arm.ProvisioningStateAccepted
		}
		if got := status(n); got != want {
			t.Errorf("operation %d in stream order: %s, want %s", i, got, want)
		}
	}
	resp, body = r.Post("/pollOperations", tick)
	if rec := r.Logs.Named(t, "poll.tick", 2)[1]; resp.StatusCode != http.StatusOK || rec["errors"] != 0.0 || rec["backed_off"] != 2.0 {
		t.Fatalf("tick 2: %d %s, record %v", resp.StatusCode, body, rec)
	}
}
