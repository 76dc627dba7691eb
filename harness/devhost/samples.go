package devhost

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
)

// Names of the sample resources; each run uses a fresh subscription, so
// they never collide with an earlier run kept in the data dir.
const (
	sampleResourceGroup = "hcpops-dev"
	sampleLocation      = "eastus"
	readyCluster        = "dev-ready"
	failingCluster      = "dev-failing"
	doomedCluster       = "dev-doomed"
	brokenNodePool      = "np-broken"
)

// sample is one request the local host submits the way ARM's frontend
// would, once its prerequisite has succeeded.
type sample struct {
	label string
	// after names the sample that must reach Succeeded first.
	after string
	want  arm.ProvisioningState
	// prepare arms a simulator scenario before the request is sent.
	prepare func(*simulator.Simulator) error
	submit  func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, opts frontend.Options) (frontend.Accepted, error)
}

// resourceIDs builds the ARM IDs of one run's subscription.
type resourceIDs struct{ subscription string }

func (r resourceIDs) cluster(name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/%s/%s",
		r.subscription, sampleResourceGroup, arm.ClusterResourceType, name)
}

func (r resourceIDs) nodePool(cluster, name string) string {
	return r.cluster(cluster) + "/" + arm.NodePoolsType + "/" + name
}

func (r resourceIDs) externalAuth(cluster, name string) string {
	return r.cluster(cluster) + "/" + arm.ExternalAuthsType + "/" + name
}

func clusterSpec(tags map[string]string) frontend.ClusterSpec {
	return frontend.ClusterSpec{Location: sampleLocation, VersionID: "4.20", ChannelGroup: "stable", Tags: tags}
}

func nodePoolSpec() frontend.NodePoolSpec {
	return frontend.NodePoolSpec{VersionID: "4.20.8", ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: 2, AutoRepair: true}
}

// samplePlan covers every request kind, one failure of each resource
// kind the simulator can stage, and a delete that cascades to a child.
func samplePlan() []sample {
	return []sample{
		{label: "create-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutCluster(ctx, ids.cluster(readyCluster), clusterSpec(map[string]string{"env": "dev"}), o)
			}},
		{label: "create-nodepool", after: "create-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutNodePool(ctx, ids.nodePool(readyCluster, "np1"), nodePoolSpec(), o)
			}},
		{label: "create-externalauth", after: "create-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				spec := frontend.ExternalAuthSpec{IssuerURL: "https://issuer.dev.example/v2.0", Audiences: []string{"hcpops-dev"}}
				return fe.PutExternalAuth(ctx, ids.externalAuth(readyCluster, "entra"), spec, o)
			}},
		{label: "request-credential", after: "create-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.RequestCredential(ctx, ids.cluster(readyCluster), o)
			}},
		// After the credential: a credential request needs a settled cluster.
		{label: "update-cluster", after: "request-credential", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutCluster(ctx, ids.cluster(readyCluster), clusterSpec(map[string]string{"env": "dev", "updated": "yes"}), o)
			}},
		// Upgrades: the control plane to 4.21 (CS runs 4.20.25 and offers
		// 4.21.20), the node pool 4.20.8 -> 4.20.10 under it.
		{label: "upgrade-cluster", after: "update-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				spec := clusterSpec(map[string]string{"env": "dev", "updated": "yes"})
				spec.VersionID = "4.21"
				return fe.PutCluster(ctx, ids.cluster(readyCluster), spec, o)
			}},
		{label: "upgrade-nodepool", after: "create-nodepool", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				spec := nodePoolSpec()
				spec.VersionID = "4.20.10"
				return fe.PutNodePool(ctx, ids.nodePool(readyCluster, "np1"), spec, o)
			}},
		{label: "create-failing-nodepool", after: "create-cluster", want: arm.ProvisioningStateFailed,
			prepare: func(sim *simulator.Simulator) error {
				_, err := sim.FailNodePool(readyCluster, brokenNodePool, simulator.NodePoolFailure{
					State: clusterservice.NodePoolStateError, Message: "simulated: VM size not available in the region"})
				return err
			},
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutNodePool(ctx, ids.nodePool(readyCluster, brokenNodePool), nodePoolSpec(), o)
			}},
		{label: "create-failing-cluster", want: arm.ProvisioningStateFailed,
			prepare: func(sim *simulator.Simulator) error {
				_, err := sim.FailCluster(failingCluster, simulator.ClusterFailure{Code: "OCM3055",
					Message: "simulated: quota exceeded in " + sampleLocation})
				return err
			},
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutCluster(ctx, ids.cluster(failingCluster), clusterSpec(nil), o)
			}},
		{label: "create-doomed-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutCluster(ctx, ids.cluster(doomedCluster), clusterSpec(nil), o)
			}},
		{label: "create-doomed-nodepool", after: "create-doomed-cluster", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.PutNodePool(ctx, ids.nodePool(doomedCluster, "np1"), nodePoolSpec(), o)
			}},
		// The cascade adds an implicit delete for the node pool.
		{label: "delete-doomed-cluster", after: "create-doomed-nodepool", want: arm.ProvisioningStateSucceeded,
			submit: func(ctx context.Context, fe *frontend.Frontend, ids resourceIDs, o frontend.Options) (frontend.Accepted, error) {
				return fe.Delete(ctx, ids.cluster(doomedCluster), o)
			}},
	}
}
