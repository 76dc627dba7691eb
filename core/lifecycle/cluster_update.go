package lifecycle

import (
	"context"
	"time"

	"github.com/hcpops/hcpops/core/state"
)

// clusterUpdate is a cluster's update. Its dispatch asks CS for the
// control plane upgrade a version change needs, PATCHes the node drain
// grace period and the authorized CIDRs, and moves the operation to
// Updating, the marker that it was sent. Its poll reads CS's cluster
// once: the update is done when the cluster is ready, carries those
// fields and runs the version asked. It fails under
// InvalidRequestContent with the merged message.
type clusterUpdate struct {
	up updating // what every update shares (update.go)
	c  *cluster // the cluster's CS calls (cluster.go)
}

func (clusterUpdate) work() string { return "cluster update" }

// dispatched: the operation left Accepted, or carries an internalId an
// earlier hcpops wrote (updating.dispatched).
func (h clusterUpdate) dispatched(j *job) bool { return h.up.dispatched(j) }

// dispatch: cluster.patch (refused values fail the operation, a busy CS
// is retried next tick), then the Updating marker (updating.dispatch). A
// cluster CS never had fails at once.
func (h clusterUpdate) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	return h.up.dispatch(ctx, r, j, h.c)
}

// poll: cluster.spec's three sources, clusterServiceClusterStatus,
// clusterServiceClusterSpec and clusterServiceClusterVersion
// (updating.poll).
func (h clusterUpdate) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.up.poll(ctx, j, h.c)
}

// deadline: what every update has (updating.deadline).
func (h clusterUpdate) deadline(j *job) time.Time { return h.up.deadline(j) }

// failure: InvalidRequestContent, the merged message (updating.failure).
func (h clusterUpdate) failure() (string, state.FailureMessage) { return h.up.failure() }
