package lifecycle

import "context"

// clusterUpdate is a cluster's update: it PATCHes the node drain grace
// period and the authorized CIDRs, and is done once CS carries them and
// the cluster is ready again.
type clusterUpdate struct {
	updating
	cluster
}

func (clusterUpdate) work() string { return "cluster update" }

func (h clusterUpdate) dispatch(ctx context.Context, j *job, t *tally) (outcome, error) {
	return h.dispatchUpdate(ctx, j, t, h.cluster)
}

func (h clusterUpdate) poll(ctx context.Context, j *job) (pollResult, error) {
	return pollUpdate(ctx, j, h.cluster)
}
