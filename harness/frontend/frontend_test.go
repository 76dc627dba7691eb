package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

const (
	sub       = "1D3378D3-5A3F-4712-85A1-2485495DFC4B"
	clusterID = "/subscriptions/" + sub + "/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"
	npID      = clusterID + "/nodePools/np1"
	eaID      = clusterID + "/externalAuths/default"
)

type fixture struct {
	t     *testing.T
	store *embedded.Store
	fe    *Frontend
	now   time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, now: time.Date(2026, 3, 14, 1, 59, 26, 0, time.UTC)}
	clk := testsupport.NewClock(f.now)
	s := embeddedtest.Open(t, embedded.WithClock(clk), embedded.WithoutSync())
	n := 0
	f.store = s
	f.fe = New(s, clk, func() string {
		n++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	})
	return f
}

func (f *fixture) resource(id string) *document.Resource {
	f.t.Helper()
	item, err := f.store.Get(context.Background(), document.PartitionKey(sub), document.CosmosID(id))
	if err != nil {
		f.t.Fatalf("reading %s: %v", id, err)
	}
	r, err := document.ParseResource(item.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) operation(a Accepted) *document.OperationDocument {
	f.t.Helper()
	item, err := f.store.Get(context.Background(), document.PartitionKey(sub), a.Operation.ID)
	if err != nil {
		f.t.Fatalf("reading operation %s: %v", a.Operation.Name(), err)
	}
	op, err := document.ParseOperation(item.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return op
}

// settle marks a resource terminal, as the backend would.
func (f *fixture) settle(id string, s arm.ProvisioningState, csID string) {
	f.t.Helper()
	r := f.resource(id)
	r.SetProvisioningState(s)
	r.SetActiveOperationID("")
	if csID != "" {
		r.SetClusterServiceID(csID)
	}
	body, err := r.MarshalReplace()
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.store.Replace(context.Background(), document.PartitionKey(sub), document.CosmosID(id), body, r.ETag); err != nil {
		f.t.Fatal(err)
	}
}

var opts = Options{Location: "eastus", TenantID: "tenant", ClientID: "client", NotificationURI: "http://127.0.0.1:1/notify"}

func TestCreateWritesOperationAndResource(t *testing.T) {
	f := newFixture(t)
	a, err := f.fe.PutCluster(context.Background(), clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable", Tags: map[string]string{"env": "dev"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	op := f.operation(a)
	if op.Properties.Request != document.RequestCreate || op.Properties.Status != arm.ProvisioningStateAccepted || op.TTL != document.OperationTTL {
		t.Fatalf("operation %+v ttl %d", op.Properties, op.TTL)
	}
	if op.Properties.NotificationURI != opts.NotificationURI || op.Properties.TenantID != "tenant" {
		t.Fatalf("request headers not kept: %+v", op.Properties)
	}
	wantStatus := "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + op.Name()
	if a.StatusPath() != wantStatus {
		t.Fatalf("status path %q, want %q", a.StatusPath(), wantStatus)
	}
	r := f.resource(clusterID)
	if r.ProvisioningState() != arm.ProvisioningStateAccepted || r.ActiveOperationID() != op.Name() || r.Version().ID != "4.20" {
		t.Fatalf("resource state %s active %s version %+v", r.ProvisioningState(), r.ActiveOperationID(), r.Version())
	}
	if d, ok := r.CreateOperationCompletionDeadline(); !ok || !d.Equal(f.now.Add(DefaultCreateDeadline)) {
		t.Fatalf("create deadline %v %v", d, ok)
	}
	if _, err := f.fe.PutCluster(context.Background(), clusterID, ClusterSpec{Location: "eastus"}, opts); !IsConflict(err) {
		t.Fatalf("second PUT while Accepted: %v, want conflict", err)
	}
}

func TestCreateDeadlineOption(t *testing.T) {
	f := newFixture(t)
	o := opts
	o.CreateDeadline = 90 * time.Second
	a, err := f.fe.PutCluster(context.Background(), clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, o)
	if err != nil {
		t.Fatal(err)
	}
	want := f.operation(a).Properties.StartTime.Add(90 * time.Second)
	if d, ok := f.resource(clusterID).CreateOperationCompletionDeadline(); !ok || !d.Equal(want) {
		t.Fatalf("create deadline %v %v, want %v", d, ok, want)
	}
}

func TestUpdateKeepsUnknownFields(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.fe.PutCluster(ctx, clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20"}, opts); err != nil {
		t.Fatal(err)
	}
	// A field this project never heard of, written by someone else.
	item, _ := f.store.Get(ctx, document.PartitionKey(sub), document.CosmosID(clusterID))
	var doc map[string]any
	_ = json.Unmarshal(item.Body, &doc)
	doc["properties"].(map[string]any)["futureField"] = map[string]any{"x": 1.5}
	body, _ := json.Marshal(doc)
	if _, err := f.store.Replace(ctx, document.PartitionKey(sub), document.CosmosID(clusterID), body, item.ETag); err != nil {
		t.Fatal(err)
	}
	f.settle(clusterID, arm.ProvisioningStateSucceeded, "/api/aro_hcp/v1alpha1/clusters/abc")
	drain := 15
	a, err := f.fe.PutCluster(ctx, clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20", NodeDrainTimeoutMinutes: &drain}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if a.Operation.Properties.Request != document.RequestUpdate {
		t.Fatalf("request %s, want Update", a.Operation.Properties.Request)
	}
	r := f.resource(clusterID)
	if got, ok := r.NodeDrainTimeoutMinutes(); !ok || got != 15 {
		t.Fatalf("nodeDrainTimeoutMinutes %d %v", got, ok)
	}
	if r.ClusterServiceID() == "" || r.ActiveOperationID() != a.Operation.Name() || r.ProvisioningState() != arm.ProvisioningStateAccepted {
		t.Fatalf("cs id %q active %q state %s", r.ClusterServiceID(), r.ActiveOperationID(), r.ProvisioningState())
	}
	item, _ = f.store.Get(ctx, document.PartitionKey(sub), document.CosmosID(clusterID))
	if !strings.Contains(string(item.Body), `"futureField":{"x":1.5}`) {
		t.Fatalf("unknown field lost: %s", item.Body)
	}
}

func TestChildConflicts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	np := NodePoolSpec{VersionID: "4.20.3", VMSize: "Standard_D8s_v3", Replicas: 3}
	if _, err := f.fe.PutNodePool(ctx, npID, np, opts); !errors.Is(err, ErrNotFound) {
		t.Fatalf("node pool without cluster: %v, want ErrNotFound", err)
	}
	if _, err := f.fe.PutCluster(ctx, clusterID, ClusterSpec{Location: "eastus"}, opts); err != nil {
		t.Fatal(err)
	}
	f.settle(clusterID, arm.ProvisioningStateProvisioning, "")
	if _, err := f.fe.PutNodePool(ctx, npID, np, opts); !IsConflict(err) {
		t.Fatalf("node pool under a Provisioning cluster: %v, want conflict", err)
	}
	f.settle(clusterID, arm.ProvisioningStateSucceeded, "/api/aro_hcp/v1alpha1/clusters/abc")
	a, err := f.fe.PutNodePool(ctx, npID, np, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := f.resource(npID)
	spec, err := r.NodePool()
	if err != nil || spec.Replicas != 3 || r.ProvisioningState() != arm.ProvisioningStateAccepted || r.ActiveOperationID() != a.Operation.Name() {
		t.Fatalf("node pool %+v %v state %s", spec, err, r.ProvisioningState())
	}
	if _, err := f.fe.PutExternalAuth(ctx, eaID, ExternalAuthSpec{IssuerURL: "https://issuer.example/v2.0", Audiences: []string{"aud"}}, opts); err != nil {
		t.Fatal(err)
	}
	if iss, err := f.resource(eaID).Issuer(); err != nil || iss.URL != "https://issuer.example/v2.0" {
		t.Fatalf("issuer %+v %v", iss, err)
	}
}

func TestClusterDeleteCascadesToChildren(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.fe.PutCluster(ctx, clusterID, ClusterSpec{Location: "eastus"}, opts); err != nil {
		t.Fatal(err)
	}
	f.settle(clusterID, arm.ProvisioningStateSucceeded, "/api/aro_hcp/v1alpha1/clusters/abc")
	npOp, err := f.fe.PutNodePool(ctx, npID, NodePoolSpec{Replicas: 1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.fe.PutExternalAuth(ctx, eaID, ExternalAuthSpec{IssuerURL: "https://i"}, opts); err != nil {
		t.Fatal(err)
	}
	f.settle(eaID, arm.ProvisioningStateSucceeded, "")
	del, err := f.fe.Delete(ctx, clusterID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if del.Operation.Properties.Status != arm.ProvisioningStateDeleting || !del.Operation.Properties.UsesNewClusterDeletionApproach {
		t.Fatalf("delete op %+v", del.Operation.Properties)
	}
	if canceled := f.operation(npOp); canceled.Properties.Status != arm.ProvisioningStateCanceled || canceled.Properties.Error.Code != arm.CodeCanceled {
		t.Fatalf("node pool create not canceled: %+v", canceled.Properties)
	}
	for _, id := range []string{clusterID, npID, eaID} {
		r := f.resource(id)
		if r.ProvisioningState() != arm.ProvisioningStateDeleting {
			t.Errorf("%s state %s, want Deleting", id, r.ProvisioningState())
		}
		if _, ok := r.DeletionTimestamp(); !ok {
			t.Errorf("%s has no deletionTimestamp", id)
		}
		item, err := f.store.Get(ctx, document.PartitionKey(sub), document.CosmosID(document.OperationResourceID(sub, r.ActiveOperationID())))
		if err != nil {
			t.Fatalf("%s: its delete operation: %v", id, err)
		}
		op, _ := document.ParseOperation(item.Body)
		implicit := id != clusterID
		if op.Properties.Request != document.RequestDelete || (op.Properties.TenantID == "") != implicit || (op.Properties.NotificationURI == "") != implicit {
			t.Errorf("%s: delete op %+v (implicit %v)", id, op.Properties, implicit)
		}
		// Each delete sets only its own kind's flag, on the operation and the resource.
		p := op.Properties
		flags := [3]bool{p.UsesNewClusterDeletionApproach, p.UsesNewNodePoolDeletionApproach, p.UsesNewExternalAuthDeletionApproach}
		want := map[string][3]bool{clusterID: {true, false, false}, npID: {false, true, false}, eaID: {false, false, true}}[id]
		if flags != want {
			t.Errorf("%s: delete op usesNew cluster/nodePool/externalAuth = %v, want %v", id, flags, want)
		}
		raw, _ := r.Marshal()
		for i, k := range []string{"usesNewClusterDeletionApproach", "usesNewNodePoolDeletionApproach", "usesNewExternalAuthDeletionApproach"} {
			if strings.Contains(string(raw), `"`+k+`":true`) != want[i] {
				t.Errorf("%s: resource %s true = %v, want %v", id, k, !want[i], want[i])
			}
		}
	}
	if d, ok := f.resource(clusterID).DeleteOperationCompletionDeadline(); !ok || !d.Equal(f.now.Add(DefaultDeleteDeadline)) {
		t.Fatalf("delete deadline %v %v", d, ok)
	}
	if _, err := f.fe.Delete(ctx, clusterID, opts); !IsConflict(err) {
		t.Fatalf("second delete: %v, want conflict", err)
	}
	if _, err := f.fe.Delete(ctx, clusterID+"x", opts); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing cluster: %v, want ErrNotFound", err)
	}
}

func TestCredentials(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.fe.PutCluster(ctx, clusterID, ClusterSpec{Location: "eastus"}, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fe.RequestCredential(ctx, clusterID, opts); !IsConflict(err) {
		t.Fatalf("credential on an Accepted cluster: %v, want conflict", err)
	}
	f.settle(clusterID, arm.ProvisioningStateSucceeded, "/api/aro_hcp/v1alpha1/clusters/abc")
	before := f.resource(clusterID).InstanceVersion()
	req, err := f.fe.RequestCredential(ctx, clusterID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if f.resource(clusterID).InstanceVersion() != before {
		t.Fatal("RequestCredential wrote the cluster")
	}
	rev, err := f.fe.RevokeCredentials(ctx, clusterID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Operation.Properties.InternalID != "/api/aro_hcp/v1alpha1/clusters/abc" {
		t.Fatalf("revoke internalId %q", rev.Operation.Properties.InternalID)
	}
	if got := f.operation(req).Properties.Status; got != arm.ProvisioningStateCanceled {
		t.Fatalf("pending credential request is %s, want Canceled", got)
	}
	if f.resource(clusterID).RevokeCredentialsOperationID() != rev.Operation.Name() {
		t.Fatal("revokeCredentialsOperationId not recorded")
	}
	if _, err := f.fe.RequestCredential(ctx, clusterID, opts); !IsConflict(err) {
		t.Fatalf("credential during revocation: %v, want conflict", err)
	}
}

func TestBadTargets(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, id := range []string{"", "not-an-id", "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm"} {
		if _, err := f.fe.PutCluster(ctx, id, ClusterSpec{}, opts); err == nil || !strings.Contains(err.Error(), "resourceID") {
			t.Errorf("PutCluster(%q): %v, want an error naming resourceID", id, err)
		}
	}
	if _, err := f.fe.PutCluster(ctx, npID, ClusterSpec{}, opts); err == nil {
		t.Error("PutCluster on a node pool ID: want an error")
	}
	n := 0
	_ = f.store.ActiveOperations(ctx, store.ActiveOperationsQuery{}, func(items []store.Item) error { n += len(items); return nil })
	if n != 0 {
		t.Fatalf("bad requests wrote %d operations", n)
	}
}
