package deploy_test

import (
	"context"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The stuck rules are held per resource over their window: a create stuck
// past 20 minutes, then superseded by a delete of the cluster (the create
// Canceled, the delete's clock at zero), still fires the cluster create
// rule, naming the delete now; the delete's Succeeded ends it. Real
// records, through the production assembly.
func TestStuckHeldAcrossANewOperation(t *testing.T) {
	r := apptest.New(t, apptest.Options{Settings: func(string) map[string]string {
		// The delete has no witness: its 404 is confirmed over a 1 ms
		// window (three reads) instead of ten minutes.
		return map[string]string{"HCPOPS_POLL_BACKOFF_MAX": "1ms", "HCPOPS_PENDING_ID_GRACE": "1ms", "HCPOPS_DISPATCH_GRACE": "1ms",
			"HCPOPS_NOTIFY_BACKOFF_BASE": "1ms", "HCPOPS_NOTIFY_BACKOFF_MAX": "1ms", "HCPOPS_ABSENCE_WINDOW": "1ms"}
	}})
	r.SubmitAt(time.Now().Add(-25 * time.Minute))
	r.Dispatch()
	r.Tick() // writes the create's operation.stuck: 25 minutes is past its 20

	const deleteName = "5d0c6a3e-7f1b-4e2a-9c8d-2b4f6a8e0c1d"
	fe := frontend.New(r.App.Store, testsupport.NewClock(time.Now()), func() string { return deleteName })
	if _, err := fe.Delete(context.Background(), apptest.ClusterID, frontend.Options{TenantID: apptest.Tenant}); err != nil {
		t.Fatal(err)
	}
	deleteOp := func() arm.ProvisioningState {
		item, err := r.App.Store.Get(context.Background(), apptest.Subscription, document.CosmosID(document.OperationResourceID(apptest.Subscription, deleteName)))
		if err != nil {
			t.Fatal(err)
		}
		op, err := document.ParseOperation(item.Body)
		if err != nil {
			t.Fatal(err)
		}
		return op.Properties.Status
	}
	var superseded []map[string]any
	for ticks := 1; deleteOp() != arm.ProvisioningStateSucceeded; ticks++ {
		if ticks > 200 {
			t.Fatalf("the delete is %s after 200 ticks:\n%s", deleteOp(), r.Logs.String())
		}
		r.Sim.Advance(10 * time.Second)
		r.Tick()
		if superseded == nil && r.Operation().Properties.Status == arm.ProvisioningStateCanceled {
			superseded = r.Logs.Records(t)
		}
	}
	all := r.Logs.Records(t)
	if superseded == nil {
		t.Fatalf("the create was never Canceled by the delete:\n%s", r.Logs.String())
	}
	rule := findAlert(t, templateAlerts(t), "stuck:cluster.create")
	after, err := time.ParseDuration(rule.param(t, "stuck_after"))
	if err != nil {
		t.Fatal(err)
	}
	got := stuckAlert(shippedQuery(t, "stuck"), superseded, apptest.Latest(superseded).Add(time.Second), "cluster", "Create", after)
	if len(got) != 1 || got[0].resourceID != apptest.ClusterID {
		t.Errorf("cluster create rule once a delete superseded the stuck create = %+v, want it held for %s", got, apptest.ClusterID)
	}
	if got := stuckAlert(shippedQuery(t, "stuck"), all, apptest.Latest(all).Add(time.Second), "cluster", "Create", after); len(got) != 0 {
		t.Errorf("cluster create rule once the delete succeeded = %+v, want nothing", got)
	}
}
