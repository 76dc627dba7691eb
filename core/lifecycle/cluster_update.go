package lifecycle

// clusterUpdate is a cluster's update: it PATCHes the node drain grace
// period and the authorized CIDRs, and is done once CS carries them and
// the cluster is ready again.
type clusterUpdate struct{ updating }

func (clusterUpdate) work() string { return "cluster update" }
