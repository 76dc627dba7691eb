package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
)

// TestUpgradesThroughHandler: through the real handler and the CS
// simulator, a cluster upgrade 4.20 -> 4.21 and a node pool upgrade
// 4.20.8 -> 4.20.10 each end Succeeded with CS at the new version, and
// the serviceProviderClusters and serviceProviderNodePools documents hold
// the active versions the frontend reads.
func TestUpgradesThroughHandler(t *testing.T) {
	r := newARMRig(t, nil)
	ctx := context.Background()
	c1, np1 := clusterRID("c1"), clusterRID("c1")+"/nodePools/np1"
	clusterSpec := frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}
	npSpec := frontend.NodePoolSpec{VersionID: "4.20.8", ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: 2}
	r.drive(r.accepted(r.fe.PutCluster(ctx, c1, clusterSpec, r.opts())))
	r.drive(r.accepted(r.fe.PutNodePool(ctx, np1, npSpec, r.opts())))
	r.wantVersions(c1, np1, "4.20.25", "4.20.8")

	clusterSpec.VersionID = "4.21"
	up := r.accepted(r.fe.PutCluster(ctx, c1, clusterSpec, r.opts()))
	r.drive(up)
	if got := r.op(up.Name()); got.Properties.Status != arm.ProvisioningStateSucceeded {
		t.Fatalf("cluster upgrade: %s %+v", got.Properties.Status, got.Properties.Error)
	}
	r.wantVersions(c1, np1, "4.21.20", "4.20.8")

	npSpec.VersionID = "4.20.10"
	npUp := r.accepted(r.fe.PutNodePool(ctx, np1, npSpec, r.opts()))
	r.drive(npUp)
	if got := r.op(npUp.Name()); got.Properties.Status != arm.ProvisioningStateSucceeded {
		t.Fatalf("node pool upgrade: %s %+v", got.Properties.Status, got.Properties.Error)
	}
	r.wantVersions(c1, np1, "4.21.20", "4.20.10")
	if n := r.Sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters/{id}/control_plane_upgrade_policies"); n != 1 {
		t.Errorf("%d control plane upgrade policies posted, want 1", n)
	}
	if n := r.Sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{np}/upgrade_policies"); n != 1 {
		t.Errorf("%d node pool upgrade policies posted, want 1", n)
	}

	// The documents go with their resources.
	r.drive(r.accepted(r.fe.Delete(ctx, c1, r.opts())))
	for _, rid := range []string{c1 + "/serviceProviderClusters/default", np1 + "/serviceProviderNodePools/default"} {
		if _, err := r.App.Store.Get(ctx, sub, document.CosmosID(rid)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after the cluster's delete: %v, want it gone", rid, err)
		}
	}
}

// wantVersions checks that CS runs the cluster and node pool at these
// versions and that their service-provider documents say so.
func (r *armRig) wantVersions(clusterRID, nodePoolRID, cluster, nodePool string) {
	r.T.Helper()
	ctx := context.Background()
	res := func(rid string) *document.Resource {
		item, err := r.App.Store.Get(ctx, sub, document.CosmosID(rid))
		if err != nil {
			r.T.Fatal(err)
		}
		d, err := document.ParseResource(item.Body)
		if err != nil {
			r.T.Fatal(err)
		}
		return d
	}
	c, err := r.App.ClusterService.GetCluster(ctx, res(clusterRID).ClusterServiceID())
	if err != nil || c.Version != cluster {
		r.T.Errorf("CS runs the cluster at %q (%v), want %s", c.Version, err, cluster)
	}
	np, err := r.App.ClusterService.GetNodePool(ctx, res(nodePoolRID).ClusterServiceID())
	if err != nil || np.Version != nodePool {
		r.T.Errorf("CS runs the node pool at %q (%v), want %s", np.Version, err, nodePool)
	}
	for _, sp := range []struct{ rid, version string }{
		{clusterRID + "/serviceProviderClusters/default", cluster},
		{nodePoolRID + "/serviceProviderNodePools/default", nodePool},
	} {
		item, err := r.App.Store.Get(ctx, sub, document.CosmosID(sp.rid))
		if err != nil {
			r.T.Fatalf("%s: %v", sp.rid, err)
		}
		var doc struct {
			Properties struct {
				Status struct {
					ControlPlane struct {
						Active []map[string]string `json:"active_versions"`
					} `json:"control_plane_version"`
					NodePool struct {
						Active []map[string]string `json:"activeVersions"`
					} `json:"nodePoolVersion"`
				} `json:"status"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(item.Body, &doc); err != nil {
			r.T.Fatal(err)
		}
		got := slices.Concat(doc.Properties.Status.ControlPlane.Active, doc.Properties.Status.NodePool.Active)
		if want := []map[string]string{{"version": sp.version}}; !reflect.DeepEqual(got, want) {
			r.T.Errorf("%s active versions = %v, want %v", sp.rid, got, want)
		}
	}
}
