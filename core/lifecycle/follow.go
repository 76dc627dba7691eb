package lifecycle

import (
	"context"
	"strings"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Children follow their parent: a node pool or external auth created
// together with its cluster is deferred until the cluster has a CS ID.
// Waiting for the tick's dispatch grace would hold it for a minute, so the
// cluster's dispatch hands its waiting children on at once (dispatchChildren)
// and the tick dispatches a waiting child as soon as its parent is in CS
// (parentInClusterService), whichever comes first.

// dispatchChildren dispatches the pending creates of parent's node pools
// and external auths once parent (a cluster create) has been dispatched.
// Failures are the child's own: logged, and left to the tick.
func (r *run) dispatchChildren(ctx context.Context, parent *job) {
	if parent.kind != document.KindCluster || parent.op.Properties.Request != document.RequestCreate || parent.res == nil {
		return
	}
	pk, parentID := parent.op.PartitionKey, parent.res.ResourceID()
	var ops []string
	err := r.store.Children(ctx, pk, parentID, func(items []store.Item) error {
		for _, it := range items {
			if id := waitingChild(it.Body, parentID); id != "" {
				ops = append(ops, id)
			}
		}
		return nil
	})
	if err != nil {
		parent.log.WarnContext(ctx, "listing children waiting for the cluster failed; the tick dispatches them", "error", err)
		return
	}
	sub := document.SubscriptionOf(parentID)
	for _, name := range ops {
		id := document.CosmosID(document.OperationResourceID(sub, name))
		o, err := r.dispatchOne(ctx, store.DocRef{PartitionKey: pk, ID: id})
		switch {
		case err != nil:
			parent.log.WarnContext(ctx, "dispatching a child after its cluster failed; the tick retries", "child_operation_id", name, "error", err)
		case o == outcomeDispatched:
			parent.log.InfoContext(ctx, "child dispatched after its cluster", "child_operation_id", name)
		}
	}
}

// waitingChild is the active operation of a direct node pool or external
// auth child of parentID that has no CS object yet, or "".
func waitingChild(raw []byte, parentID string) string {
	kind, err := document.Sniff(raw)
	if err != nil || (kind != document.KindNodePool && kind != document.KindExternalAuth) {
		return ""
	}
	res, err := document.ParseResource(raw)
	if err != nil || res.ClusterServiceID() != "" || res.ActiveOperationID() == "" {
		return ""
	}
	rest := res.ResourceID()
	if len(rest) <= len(parentID)+1 || strings.Count(rest[len(parentID)+1:], "/") != 1 {
		return ""
	}
	return res.ActiveOperationID()
}

// parentInClusterService reports whether j is a child create whose parent
// cluster has its CS ID, so the tick need not wait out the dispatch grace.
func (e *Engine) parentInClusterService(ctx context.Context, j *job) bool {
	if (j.kind != document.KindNodePool && j.kind != document.KindExternalAuth) || j.op.Properties.Request != document.RequestCreate {
		return false
	}
	parentID, err := document.ParentClusterID(j.res.ResourceID())
	if err != nil {
		return false
	}
	parent, err := e.readResource(ctx, j.op.PartitionKey, parentID)
	return err == nil && parent != nil && parent.ClusterServiceID() != ""
}
