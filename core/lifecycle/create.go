package lifecycle

import (
	"context"
	"fmt"
	"strings"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// dispatchCreate makes the CS object of a new resource; how is the kind's.
func (e *Engine) dispatchCreate(ctx context.Context, j *job, _ *tally) (outcome, error) {
	return j.a.create(ctx, j)
}

// pollCreate reads the state of the object the create made.
func (e *Engine) pollCreate(ctx context.Context, j *job) (pollResult, error) {
	read := j.a.status
	if j.a.created != nil {
		read = j.a.created
	}
	s, err := read(ctx, j, j.res.ClusterServiceID())
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(s), nil
}

// createChild creates the CS node pool or external auth of j.res. Its CS
// ID is deterministic (the lower-cased ARM name under the parent's href),
// so post can GET first, and a repeated dispatch never creates a second
// one. A parent cluster not yet in CS defers the work to a later tick.
func (e *Engine) createChild(ctx context.Context, j *job,
	post func(ctx context.Context, j *job, clusterHref, id string) error) (outcome, error) {
	parentID, err := document.ParentClusterID(j.res.ResourceID())
	if err != nil {
		return outcomeSkipped, fmt.Errorf("%w: %w", errMalformed, err)
	}
	parent, err := e.readResource(ctx, j.op.PartitionKey, parentID)
	if err != nil {
		return outcomeSkipped, err
	}
	if parent == nil || parent.ClusterServiceID() == "" {
		return outcomeSkipped, retryLater("parent cluster %s is not in clusters service yet", parentID)
	}
	if err := checkChildName(j); err != nil {
		return outcomeSkipped, err
	}
	clusterHref, id := parent.ClusterServiceID(), strings.ToLower(j.res.Name())
	href := j.a.childHref(clusterHref, id)
	if err := post(ctx, j, clusterHref, id); err != nil && cs.Classify(err) != cs.Exists {
		return outcomeSkipped, fmt.Errorf("creating %s %s: %w", j.kind, href, refusedBy(err, j.a.noun, "create"))
	}
	if err := e.recordClusterServiceID(ctx, j, href); err != nil {
		return outcomeSkipped, err
	}
	j.log.Info("created in clusters service", "cluster_service_id", href)
	return outcomeDispatched, nil
}

// recordClusterServiceID stores href as the resource's clusterServiceID
// (clearing a cluster's pending ID): the marker that its create was made.
func (e *Engine) recordClusterServiceID(ctx context.Context, j *job, href string) error {
	res, _, err := e.mutateResource(ctx, j.log, j.res, func(r *document.Resource) (bool, error) {
		if r.ClusterServiceID() != "" {
			return false, nil
		}
		r.SetClusterServiceID(href)
		if r.PendingClusterServiceID() != "" {
			return true, r.SetPendingClusterServiceID("")
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("recording clusters service ID %s: %w", href, err)
	}
	if res != nil {
		j.res = res
	}
	return nil
}
