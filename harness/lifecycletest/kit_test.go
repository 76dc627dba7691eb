package lifecycletest

import (
	"context"
	"net/http"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// A Kit runs the whole lifecycle: a create the frontend wrote is
// dispatched from the change feed, polled to CS's ready cluster on the
// Kit's clock, and ends Succeeded with the resource's state; a second
// engine on the same parts then finds nothing left to do.
func TestKitDrivesACreateToItsEnd(t *testing.T) {
	k := New(t, Options{})
	rid := testsupport.ClusterRID("c1")
	name := k.Submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.PutCluster(ctx, rid, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable",
			ManagedResourceGroup: "c1-mrg"}, o)
	})
	start := k.Clock.Now()
	k.Drive(t, name)
	k.WantOp(t, name, arm.ProvisioningStateSucceeded, "")
	res := k.Resource(t, rid)
	if res == nil || res.ProvisioningState() != arm.ProvisioningStateSucceeded || res.ClusterServiceID() == "" {
		t.Fatalf("the cluster's document after the create: %+v, want Succeeded with its CS id", res)
	}
	if posts := k.Sim.Ledger().Count(http.MethodPost, "/api/aro_hcp/v1alpha1/clusters"); posts != 1 {
		t.Errorf("CS was sent %d cluster POSTs, want 1", posts)
	}
	// Validating, pending and installing take a minute each (Durations).
	if took := k.Clock.Now().Sub(start); took < 3*Durations().ClusterInstalling {
		t.Errorf("the create ended after %v of the Kit's clock, before CS could have installed it", took)
	}
	if r, err := k.NewEngine(t).Tick(context.Background()); err != nil || r.Changed != 0 {
		t.Errorf("a second engine's tick after the end: %+v, %v; want nothing changed", r, err)
	}
}
