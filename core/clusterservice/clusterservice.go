// Package clusterservice holds what the operation lifecycle needs from
// OpenShift Clusters Service (CS): a small client interface and plain value
// types, so the domain never touches the ocm-sdk-go wire model. The real
// client (package ocm) and the simulator (package simulator) live below.
//
// Every ID here is a CS href, e.g. /api/aro_hcp/v1alpha1/clusters/{id}.
package clusterservice

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Client is the subset of Clusters Service the lifecycle calls.
type Client interface {
	// ListClusters pages through every cluster matching a CS search
	// expression (e.g. "azure.resource_name = 'x'").
	ListClusters(ctx context.Context, search string) ([]Cluster, error)
	// PostCluster creates a cluster with the caller-chosen spec.ID.
	PostCluster(ctx context.Context, spec ClusterSpec) (Cluster, error)
	GetCluster(ctx context.Context, href string) (Cluster, error)
	GetClusterStatus(ctx context.Context, href string) (ClusterStatus, error)
	PatchCluster(ctx context.Context, href string, patch ClusterPatch) (Cluster, error)
	DeleteCluster(ctx context.Context, href string) error
	GetInflightChecks(ctx context.Context, clusterHref string) ([]InflightCheck, error)

	PostNodePool(ctx context.Context, clusterHref string, spec NodePoolSpec) (NodePool, error)
	GetNodePool(ctx context.Context, href string) (NodePool, error)
	GetNodePoolStatus(ctx context.Context, href string) (NodePoolStatus, error)
	PatchNodePool(ctx context.Context, href string, patch NodePoolPatch) (NodePool, error)
	DeleteNodePool(ctx context.Context, href string) error

	PostExternalAuth(ctx context.Context, clusterHref string, spec ExternalAuthSpec) (ExternalAuth, error)
	GetExternalAuth(ctx context.Context, href string) (ExternalAuth, error)
	PatchExternalAuth(ctx context.Context, href string, patch ExternalAuthSpec) (ExternalAuth, error)
	DeleteExternalAuth(ctx context.Context, href string) error

	// Break-glass credentials live under /api/clusters_mgmt/v1; the client
	// maps an aro_hcp cluster href onto that prefix itself.
	PostBreakGlassCredential(ctx context.Context, clusterHref string) (BreakGlassCredential, error)
	GetBreakGlassCredential(ctx context.Context, href string) (BreakGlassCredential, error)
	// ListBreakGlassCredentials pages through a cluster's credentials; the
	// revoke poll waits until none is awaiting_revocation.
	ListBreakGlassCredentials(ctx context.Context, clusterHref string) ([]BreakGlassCredential, error)
	DeleteBreakGlassCredentials(ctx context.Context, clusterHref string) error

	// Batched reads for the poll tick. Each returns the objects CS listed
	// with their status inline, keyed by the href asked for; an href
	// missing from the result (deleted, not yet created, not visible, or
	// listed without status) must be read with its single-object GET, so a
	// 404 keeps meaning exactly what it meant. The map returned is the
	// caller's: the tick keeps it, and may add to it.

	// ListClustersByHref reads clusters with one list request searching
	// their ids (more only if CS pages below the requested size).
	ListClustersByHref(ctx context.Context, hrefs []string) (map[string]Cluster, error)
	// ListNodePoolsByHref reads node pools of one cluster the same way.
	ListNodePoolsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]NodePool, error)
	// ListExternalAuthsByHref pages through one cluster's external auths:
	// CS's external auth list takes no search.
	ListExternalAuthsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]ExternalAuth, error)

	// Upgrades (upgrade.go). ListVersions pages through the versions CS
	// offers that match search ("" for all).
	ListVersions(ctx context.Context, search string) ([]Version, error)
	ListControlPlaneUpgradePolicies(ctx context.Context, clusterHref string) ([]UpgradePolicy, error)
	// PostControlPlaneUpgradePolicy asks CS to upgrade the cluster's
	// control plane to version (a raw id).
	PostControlPlaneUpgradePolicy(ctx context.Context, clusterHref, version string) (UpgradePolicy, error)
	ListNodePoolUpgradePolicies(ctx context.Context, nodePoolHref string) ([]UpgradePolicy, error)
	PostNodePoolUpgradePolicy(ctx context.Context, nodePoolHref, version string) (UpgradePolicy, error)
}

// Href prefixes.
const (
	AroHCPPrefix         = "/api/aro_hcp/v1alpha1"
	ClustersMgmtPrefix   = "/api/clusters_mgmt/v1"
	ClustersPath         = AroHCPPrefix + "/clusters"
	NodePoolsSegment     = "/node_pools/"
	ExternalAuthsSegment = "/external_auth_config/external_auths/"
	BreakGlassSegment    = "/break_glass_credentials/"
)

// ClusterHref, NodePoolHref and ExternalAuthHref build the deterministic
// hrefs dispatch relies on for idempotency.
func ClusterHref(id string) string { return ClustersPath + "/" + id }
func NodePoolHref(clusterHref, id string) string {
	return clusterHref + NodePoolsSegment + id
}
func ExternalAuthHref(clusterHref, id string) string {
	return clusterHref + ExternalAuthsSegment + id
}

// Cluster states as CS spells them.
const (
	ClusterStateError        = "error"
	ClusterStateHibernating  = "hibernating"
	ClusterStateInstalling   = "installing"
	ClusterStatePending      = "pending"
	ClusterStatePoweringDown = "powering_down"
	ClusterStateReady        = "ready"
	ClusterStateResuming     = "resuming"
	ClusterStateUninstalling = "uninstalling"
	ClusterStateUnknown      = "unknown"
	ClusterStateUpdating     = "updating"
	ClusterStateValidating   = "validating"
	ClusterStateWaiting      = "waiting"
)

// Node pool states (plain strings in CS).
const (
	NodePoolStateValidating       = "validating"
	NodePoolStatePending          = "pending"
	NodePoolStateInstalling       = "installing"
	NodePoolStateReady            = "ready"
	NodePoolStateUpdating         = "updating"
	NodePoolStateValidatingUpdate = "validating_update"
	NodePoolStatePendingUpdate    = "pending_update"
	NodePoolStateUninstalling     = "uninstalling"
	NodePoolStateRecoverableError = "recoverable_error"
	NodePoolStateError            = "error"
)

// External auth states.
const (
	ExternalAuthStateReady        = "ready"
	ExternalAuthStateUninstalling = "uninstalling"
	ExternalAuthStateError        = "error"
)

// Break-glass credential states.
const (
	CredentialStateCreated            = "created"
	CredentialStateIssued             = "issued"
	CredentialStateAwaitingRevocation = "awaiting_revocation"
	CredentialStateRevoked            = "revoked"
	CredentialStateFailed             = "failed"
	CredentialStateExpired            = "expired"
)

// Inflight check states.
const (
	InflightCheckPending = "pending"
	InflightCheckRunning = "running"
	InflightCheckPassed  = "passed"
	InflightCheckFailed  = "failed"
)

// ProvisionErrorInflightChecks is the CS code that means "read the inflight
// checks for the real errors".
const ProvisionErrorInflightChecks = "OCM4001"

// AzureRef identifies the ARM resource behind a CS cluster; dispatch searches
// on it to adopt a cluster created by an earlier, interrupted attempt.
type AzureRef struct {
	SubscriptionID           string
	ResourceGroupName        string
	ResourceName             string
	TenantID                 string
	ManagedResourceGroupName string
}

type ClusterSpec struct {
	ID           string // caller-chosen, 32 chars of [0-9a-v]
	Name         string
	Region       string
	VersionID    string
	ChannelGroup string
	Azure        AzureRef
}

// ClusterPatch carries only the fields an update may change; nil means
// "leave as is".
type ClusterPatch struct {
	NodeDrainGracePeriodMinutes *int
	AuthorizedCIDRs             []string // nil: unchanged
}

type ClusterStatus struct {
	State                 string
	Description           string
	ProvisionErrorCode    string
	ProvisionErrorMessage string
}

type Cluster struct {
	ID                          string
	Href                        string
	Name                        string
	Region                      string
	Azure                       AzureRef
	NodeDrainGracePeriodMinutes int
	AuthorizedCIDRs             []string
	// Version is the OpenShift version CS reports the cluster at, as a
	// raw id ("4.21.20"; "" when CS names none).
	Version string
	Status  ClusterStatus
}

type InflightCheck struct {
	ID      string
	Name    string
	State   string
	Details map[string]any // ARO-HCP reads Details["error"]
}

type NodePoolSpec struct {
	ID           string // lower-cased ARM name
	VersionID    string
	ChannelGroup string
	VMSize       string
	Replicas     int
	AutoRepair   bool
	Labels       map[string]string
}

type NodePoolPatch struct {
	Replicas *int
	Labels   map[string]string // nil: unchanged
}

type NodePoolStatus struct {
	State           string
	Message         string
	CurrentReplicas int
}

type NodePool struct {
	ID       string
	Href     string
	Replicas int
	Labels   map[string]string
	// Version is the node pool's OpenShift version as CS reports it, a
	// raw id ("4.20.10"; "" when CS names none).
	Version string
	Status  NodePoolStatus
}

type ExternalAuthSpec struct {
	ID        string // lower-cased ARM name
	IssuerURL string
	Audiences []string
	IssuerCA  string
}

type ExternalAuthStatus struct {
	State   string
	Message string
}

type ExternalAuth struct {
	ID        string
	Href      string
	IssuerURL string
	Audiences []string
	Status    ExternalAuthStatus
}

// BreakGlassCredential is a cluster admin credential. Kubeconfig is a
// secret: CS sends it only while the credential is issued, and it is never
// stored or logged, so the type renders itself without it.
type BreakGlassCredential struct {
	ID         string
	Href       string
	Username   string
	Status     string
	Expires    time.Time
	Kubeconfig string
}

// String omits the kubeconfig, so %v and error messages cannot leak it.
func (c BreakGlassCredential) String() string {
	return fmt.Sprintf("{ID:%s Href:%s Username:%s Status:%s Expires:%s Kubeconfig:%s}",
		c.ID, c.Href, c.Username, c.Status, c.Expires.Format(time.RFC3339), redacted(c.Kubeconfig))
}

// GoString is String, for %#v.
func (c BreakGlassCredential) GoString() string { return c.String() }

// LogValue keeps the kubeconfig out of slog lines.
func (c BreakGlassCredential) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", c.ID), slog.String("href", c.Href), slog.String("status", c.Status),
		slog.Time("expires", c.Expires), slog.String("kubeconfig", redacted(c.Kubeconfig)))
}

func redacted(secret string) string {
	if secret == "" {
		return ""
	}
	return "[redacted]"
}

// Error is Clusters Service's own error answer (any status >= 400): a
// JSON body of OCM's error shape (kind "Error", an id equal to the
// status, a code and a reason). The client makes one only of such a body;
// any other error answer is an *UnrecognizedAnswer, which is no evidence.
type Error struct {
	Status int
	Code   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("clusters service: status %d, code %q: %s", e.Status, e.Code, e.Reason)
}
