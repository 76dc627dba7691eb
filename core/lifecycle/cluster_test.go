package lifecycle

import (
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

const clustersPOST = cs.ClustersPath

func TestClusterCreateSucceeds(t *testing.T) {
	e := newEnv(t)
	name := e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true})
	// ARO-HCP documents carry members this project has never heard of.
	e.editDoc(t, clusterRID("c1"), func(doc obj) {
		props(doc)["customerProperties"].(obj)["someFutureCustomerField"] = obj{"kept": []any{true, 1.5, "x"}}
	})
	e.drive(t, name)

	op := e.wantOp(t, name, arm.ProvisioningStateSucceeded, "")
	res := e.resource(t, clusterRID("c1"))
	if res.ProvisioningState() != arm.ProvisioningStateSucceeded {
		t.Errorf("cluster provisioningState = %s, want Succeeded", res.ProvisioningState())
	}
	if res.ActiveOperationID() != "" {
		t.Errorf("activeOperationId = %q, want it cleared", res.ActiveOperationID())
	}
	if res.PendingClusterServiceID() != "" || res.ClusterServiceID() == "" {
		t.Errorf("pending = %q, clusterServiceID = %q; want only the latter", res.PendingClusterServiceID(), res.ClusterServiceID())
	}
	if got := e.csPosts(clustersPOST); got != 1 {
		t.Errorf("cluster POSTs = %d, want 1", got)
	}
	raw := e.rawResource(t, clusterRID("c1"))
	if _, ok := props(raw)["customerProperties"].(obj)["someFutureCustomerField"]; !ok {
		t.Errorf("an unknown customer field was lost: %v", props(raw)["customerProperties"])
	}
	calls := e.sink.calls(name)
	if len(calls) != 1 || calls[0].Body.Status != arm.ProvisioningStateSucceeded || calls[0].Body.EndTime == nil {
		t.Errorf("notifications = %+v, want one Succeeded with endTime", calls)
	}
	if op.Properties.NotificationURI != "" {
		t.Errorf("notificationUri = %q, want it cleared", op.Properties.NotificationURI)
	}
}
