package simulator

import (
	"net/http"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// apiRoutes registers every CS endpoint the client uses. The patterns are
// also the ledger's keys.
func (s *Simulator) apiRoutes() *http.ServeMux {
	const (
		clusters  = cs.ClustersPath
		cluster   = clusters + "/{id}"
		nodePools = cluster + "/node_pools"
		nodePool  = nodePools + "/{np}"
		auths     = cluster + "/external_auth_config/external_auths"
		auth      = auths + "/{ea}"
		creds     = cs.ClustersMgmtPrefix + "/clusters/{id}/break_glass_credentials"
	)
	m := http.NewServeMux()
	m.HandleFunc("GET "+clusters, s.listClusters)
	m.HandleFunc("POST "+clusters, s.postCluster)
	m.HandleFunc("GET "+cluster, s.getCluster)
	m.HandleFunc("PATCH "+cluster, s.patchCluster)
	m.HandleFunc("DELETE "+cluster, s.deleteCluster)
	m.HandleFunc("GET "+cluster+"/status", s.getClusterStatus)
	m.HandleFunc("GET "+cluster+"/inflight_checks", s.getInflightChecks)
	m.HandleFunc("GET "+cluster+"/control_plane_upgrade_policies", s.listControlPlaneUpgradePolicies)
	m.HandleFunc("POST "+cluster+"/control_plane_upgrade_policies", s.postControlPlaneUpgradePolicy)

	m.HandleFunc("GET "+nodePools, s.listNodePools)
	m.HandleFunc("POST "+nodePools, s.postNodePool)
	m.HandleFunc("GET "+nodePool, s.getNodePool)
	m.HandleFunc("PATCH "+nodePool, s.patchNodePool)
	m.HandleFunc("DELETE "+nodePool, s.deleteNodePool)
	m.HandleFunc("GET "+nodePool+"/status", s.getNodePoolStatus)
	m.HandleFunc("GET "+nodePool+"/upgrade_policies", s.listNodePoolUpgradePolicies)
	m.HandleFunc("POST "+nodePool+"/upgrade_policies", s.postNodePoolUpgradePolicy)

	m.HandleFunc("GET "+auths, s.listExternalAuths)
	m.HandleFunc("POST "+auths, s.postExternalAuth)
	m.HandleFunc("GET "+auth, s.getExternalAuth)
	m.HandleFunc("PATCH "+auth, s.patchExternalAuth)
	m.HandleFunc("DELETE "+auth, s.deleteExternalAuth)

	m.HandleFunc("GET "+creds, s.listCredentials)
	m.HandleFunc("POST "+creds, s.postCredential)
	m.HandleFunc("DELETE "+creds, s.deleteCredentials)
	m.HandleFunc("GET "+creds+"/{bg}", s.getCredential)

	m.HandleFunc("GET "+VersionsPath, s.listVersions)
	m.HandleFunc("GET "+VersionsPath+"/{version}", s.getVersion)

	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.notFound(w, r, "Can't find resource for path '%s' and method '%s'", r.URL.Path, r.Method)
	})
	return m
}
