package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// clusterDelete is a cluster's delete. Its dispatch asks CS to delete
// the cluster and stamps clusterServiceDeletionTimestamp on the resource,
// the marker. Its poll reads the cluster until CS answers 404, the
// evidence that completes it (completeDelete soft-deletes the resource
// and its children, then writes Succeeded). Deleting the cluster deletes
// its node pools and external auths with it; on the legacy path the
// delete completes only once their documents are gone too, as ARO-HCP
// waits for them. It fails under InternalServerError with the failing
// source's own message.
type clusterDelete struct {
	deletion // what every delete shares (delete.go), but its poll
}

// poll: cluster.status until CS answers 404 (deletion.poll); on the legacy
// path, then the node pools and external auths left under it
// (descendantResources).
func (h clusterDelete) poll(ctx context.Context, j *job) (pollResult, error) {
	r, err := h.deletion.poll(ctx, j)
	if err != nil || !r.gone || !legacyDelete(j) {
		return r, err
	}
	n, err := h.liveChildResources(ctx, j)
	if err != nil {
		return pollResult{}, err
	}
	if n > 0 {
		j.log.DebugContext(ctx, "legacy deletion approach: waiting for child resources", "count", n)
		waiting := polledStates(state.NewOperationState(arm.ProvisioningStateDeleting,
			fmt.Sprintf("%d node pools and external auths remain", n)).WithSource("descendantResources"))
		waiting.absent = r.absent // CS's 404 is still what the tick heard
		return waiting, nil
	}
	return r, nil
}

// liveChildResources counts the node pools and external auths still under
// the cluster.
func (h clusterDelete) liveChildResources(ctx context.Context, j *job) (int, error) {
	kids, err := h.e.children(ctx, j, j.op.PartitionKey, j.op.Properties.ExternalID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range kids {
		if k, err := document.ResourceKind(d.ResourceType); err == nil && (k == document.KindNodePool || k == document.KindExternalAuth) {
			n++
		}
	}
	return n, nil
}
