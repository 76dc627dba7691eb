package testsupport

import "github.com/hcpops/hcpops/core/arm"

// The ARM identity the lifecycle's and the read service's tests request
// their operations under (made-up ids in ARO-HCP's shapes).
const (
	Subscription  = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	ResourceGroup = "myRG"
	Tenant        = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	Client        = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
)

// ClusterRID is the ARM resource ID of cluster name under Subscription
// and ResourceGroup.
func ClusterRID(name string) string {
	return "/subscriptions/" + Subscription + "/resourceGroups/" + ResourceGroup + "/providers/" + arm.ClusterResourceType + "/" + name
}

// NodePoolRID is the ARM resource ID of node pool name of cluster.
func NodePoolRID(cluster, name string) string { return ClusterRID(cluster) + "/nodePools/" + name }

// ExternalAuthRID is the ARM resource ID of external auth name of cluster.
func ExternalAuthRID(cluster, name string) string {
	return ClusterRID(cluster) + "/externalAuths/" + name
}
