package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// creation is what every create shares: its dispatch is done once the
// resource has its CS ID, and it fails with the merged message (its
// deadline is the request's: deadline.go). Its poll reads the state of
// the object the create made, with k's calls. It has no dispatch: a
// cluster's is clusterCreate's, a child's childCreation's.
type creation struct {
	e *Engine
	k kind
}

func (creation) dispatched(j *job) bool { return j.res.ClusterServiceID() != "" }

func (creation) failure() (string, state.FailureMessage) {
	return arm.CodeInternalServerError, state.Merged
}

func (c creation) poll(ctx context.Context, j *job) (pollResult, error) {
	s, err := c.k.status(ctx, j, j.res.ClusterServiceID())
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(s), nil
}

// dispatch creates the CS node pool or external auth of j.res. Its CS
// ID is deterministic (the lower-cased ARM name under the parent's href),
// so post can GET first, and a repeated dispatch never creates a second
// one. A parent cluster not yet in CS defers the work to a later tick.
// A cluster's create dispatches its own way (clusterCreate), so k is a
// child here.
// childCreation is a node pool's or an external auth's create:
// creation's steps, and the POST under its cluster once that is in CS (a
// cluster's own is clusterCreate's).
type childCreation struct {
	creation
	k child
}

func (c childCreation) dispatch(ctx context.Context, _ *run, j *job) (outcome, error) {
	e, k := c.e, c.k
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
	if err := checkChildName(k.noun(), j.res); err != nil {
		return outcomeSkipped, err
	}
	clusterHref, id := parent.ClusterServiceID(), strings.ToLower(j.res.Name())
	href := k.href(clusterHref, id)
	err = k.post(ctx, j, clusterHref, id)
	if cs.Classify(err) == cs.Exists {
		// CS's 409 is checked before it is believed: post GETs first, so
		// a second call adopts what CS has at the ID (the child's name
		// under this resource's cluster: it is this resource's), or posts
		// once more when CS has nothing there.
		j.log.InfoContext(ctx, "clusters service answered 409; checking what it has at the ID", append(cs.CallAttrs(err), "cluster_service_id", href)...)
		// A child's ID is its name, so a 409 beside a 404 for it is CS
		// contradicting itself: no evidence either way, retried.
		if err = k.post(ctx, j, clusterHref, id); cs.Classify(err) == cs.Exists {
			return outcomeSkipped, fmt.Errorf("clusters service answered 409 for %s %s but has none there; no evidence either way: %w",
				j.kind, href, err)
		}
	}
	if err != nil {
		return outcomeSkipped, fmt.Errorf("creating %s %s: %w", j.kind, href, e.refusedAbout(ctx, clusterHref, err, k.noun(), "create"))
	}
	if err := e.recordClusterServiceID(ctx, j, href); err != nil {
		return outcomeSkipped, err
	}
	j.log.InfoContext(ctx, "created in clusters service", "cluster_service_id", href)
	return outcomeDispatched, nil
}

// recordClusterServiceID stores href as the resource's clusterServiceID
// (clearing a cluster's pending ID): the marker that its create was made.
// A resource deleted while the create's POST was in flight has nobody
// left to delete what the POST made, so the create deletes it (a resource
// still being deleted records the ID, and its delete removes the object:
// one DELETE either way).
func (e *Engine) recordClusterServiceID(ctx context.Context, j *job, href string) error {
	res, _, err := e.mutateResource(ctx, j, func(r *document.Resource) (bool, error) {
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
	if res == nil {
		return e.removeCreated(ctx, j, href)
	}
	j.res = res
	return nil
}

// removeCreated deletes the CS object a create made for a resource that
// was deleted meanwhile, and says so; a failed DELETE is retried with the
// dispatch (the POST's GET-first or adoption finds the object again).
func (e *Engine) removeCreated(ctx context.Context, j *job, href string) error {
	var err error
	switch kind, _ := cs.ParseHref(href); kind {
	case cs.HrefCluster:
		err = e.cs.DeleteCluster(ctx, href)
	case cs.HrefNodePool:
		err = e.cs.DeleteNodePool(ctx, href)
	case cs.HrefExternalAuth:
		err = e.cs.DeleteExternalAuth(ctx, href)
	}
	if err != nil && cs.Classify(err) != cs.Absent {
		return fmt.Errorf("deleting %s, created for a resource deleted meanwhile: %w", href, err)
	}
	j.log.WarnContext(ctx, "the resource was deleted while its create was in flight; deleted what the create made",
		append(cs.CallAttrs(err), "cluster_service_id", href)...)
	return retryLater("resource %s was deleted while its create was in flight", j.op.Properties.ExternalID)
}
