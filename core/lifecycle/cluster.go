package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// dispatchClusterCreate creates the CS cluster of j.res exactly once, even
// when batches are redelivered, run concurrently or cut short:
//
//  1. choose an ID and persist it as pendingClusterServiceID (etag write)
//     BEFORE any POST; a writer that loses that race leaves the work to
//     the winner;
//  2. search CS for a cluster of this ARM resource and adopt a single
//     match (an earlier attempt's POST that was never recorded);
//  3. otherwise POST with the pending ID; a 409 means it exists: adopt it;
//  4. record clusterServiceID and clear the pending ID.
//
// A pending ID chosen less than PendingIDGrace ago belongs to a dispatch
// that may still be running, so that case is deferred to a later tick.
func (e *Engine) dispatchClusterCreate(ctx context.Context, j *job) (outcome, error) {
	pending := j.res.PendingClusterServiceID()
	if pending == "" {
		id, err := e.newClusterID()
		if err != nil {
			return outcomeSkipped, err
		}
		href := cs.ClusterHref(id)
		now := e.clock()
		res, wrote, err := e.mutateResource(ctx, j.log, j.res, func(r *document.Resource) (bool, error) {
			if r.PendingClusterServiceID() != "" || r.ClusterServiceID() != "" {
				return false, nil
			}
			if err := r.SetPendingClusterServiceIDTime(now); err != nil {
				return false, err
			}
			return true, r.SetPendingClusterServiceID(href)
		})
		if err != nil {
			return outcomeSkipped, fmt.Errorf("persisting pending cluster ID: %w", err)
		}
		if !wrote {
			return outcomeSkipped, retryLater("another dispatcher chose the cluster ID first")
		}
		j.res, pending = res, href
		j.log.Info("pending cluster ID persisted", "pending_cluster_service_id", href)
	} else if chosen := pendingChosenAt(j); e.clock().Sub(chosen) < e.cfg.PendingIDGrace {
		return outcomeSkipped, retryLater("pending cluster ID %s was chosen at %s and may still be in flight",
			pending, chosen.UTC().Format(time.RFC3339))
	}

	href, err := e.adoptOrPostCluster(ctx, j, pending)
	if err != nil {
		return outcomeSkipped, err
	}
	if err := e.recordClusterServiceID(ctx, j, href); err != nil {
		return outcomeSkipped, err
	}
	return outcomeDispatched, nil
}

// pendingChosenAt is when the pending cluster ID was chosen: the time
// hcpops records beside it or, when an upstream writer dropped that (or
// chose the ID itself), the operation's startTime. The fallback can only
// make the ID look older, so a dispatch may go ahead sooner; that is
// safe, because adoptOrPostCluster searches before it POSTs and a second
// POST of the same ID is a 409 that is adopted. The document's _ts is not
// used: any unrelated write to the resource would restart the window.
func pendingChosenAt(j *job) time.Time {
	if t, ok := j.res.PendingClusterServiceIDTime(); ok {
		return t
	}
	return j.op.Properties.StartTime
}

// adoptOrPostCluster returns the href of the CS cluster of j.res, creating
// it with the pending href's ID when CS has none.
func (e *Engine) adoptOrPostCluster(ctx context.Context, j *job, pending string) (string, error) {
	rid, err := document.ParseResourceID("resourceID", j.res.ResourceID())
	if err != nil {
		return "", fmt.Errorf("%w: %w", errMalformed, err)
	}
	ref := cs.AzureRef{
		SubscriptionID:           rid.SubscriptionID,
		ResourceGroupName:        rid.ResourceGroupName,
		ResourceName:             rid.Name,
		ManagedResourceGroupName: j.res.ManagedResourceGroup(),
	}
	found, err := e.cs.ListClusters(ctx, clusterSearch(ref))
	if err != nil {
		return "", fmt.Errorf("searching clusters service for %s: %w", j.res.ResourceID(), err)
	}
	var matches []cs.Cluster
	for _, c := range found { // CS search semantics vary; trust only an exact match
		if strings.EqualFold(c.Azure.SubscriptionID, ref.SubscriptionID) &&
			strings.EqualFold(c.Azure.ResourceGroupName, ref.ResourceGroupName) &&
			strings.EqualFold(c.Azure.ResourceName, ref.ResourceName) {
			matches = append(matches, c)
		}
	}
	switch len(matches) {
	case 0:
	case 1:
		href := clusterHrefOf(matches[0])
		j.log.Info("adopting existing cluster", "cluster_service_id", href)
		return href, nil
	default:
		ids := make([]string, len(matches))
		for i, m := range matches {
			ids[i] = m.ID
		}
		return "", fmt.Errorf("clusters service has %d clusters for %s (%s); refusing to guess",
			len(matches), j.res.ResourceID(), strings.Join(ids, ", "))
	}

	id := strings.TrimPrefix(pending, cs.ClustersPath+"/")
	if ref.TenantID, err = e.tenantOf(ctx, j); err != nil {
		return "", err
	}
	v := j.res.Version()
	spec := cs.ClusterSpec{ID: id, Name: j.res.Name(), Region: j.res.Location(),
		VersionID: v.ID, ChannelGroup: v.ChannelGroup, Azure: ref}
	c, err := e.cs.PostCluster(ctx, spec)
	switch {
	case cs.Classify(err) == cs.Exists:
		j.log.Info("cluster already exists in clusters service; adopting it", "cluster_service_id", pending)
		return pending, nil
	case err != nil:
		return "", fmt.Errorf("creating cluster %s: %w", pending, refusedBy(err, "cluster", "create"))
	}
	j.log.Info("cluster created in clusters service", "cluster_service_id", clusterHrefOf(c))
	return clusterHrefOf(c), nil
}

// tenantOf is the subscription's tenant, as ARO-HCP sends it to CS; the
// operation's home tenant stands in when no subscription document says.
func (e *Engine) tenantOf(ctx context.Context, j *job) (string, error) {
	sub := subscriptionOf(j.res.ResourceID())
	item, err := e.store.Get(ctx, j.op.PartitionKey, document.CosmosID(document.SubscriptionResourceID(sub)))
	if err == nil {
		if t, err := document.SubscriptionTenantID(item.Body); err == nil && t != "" {
			return t, nil
		}
	}
	return j.op.Properties.TenantID, nil
}

func clusterHrefOf(c cs.Cluster) string {
	if c.Href != "" {
		return c.Href
	}
	return cs.ClusterHref(c.ID)
}

// clusterSearch is the CS search for the cluster of an ARM resource, with
// lower-cased values as ARO-HCP sends them.
func clusterSearch(ref cs.AzureRef) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(strings.ToLower(s), "'", "''") + "'" }
	return "azure.subscription_id = " + q(ref.SubscriptionID) +
		" and azure.resource_group_name = " + q(ref.ResourceGroupName) +
		" and azure.resource_name = " + q(ref.ResourceName)
}

// clusterAdapter is the cluster's part of the request handlers.
func (e *Engine) clusterAdapter() *adapter {
	return &adapter{
		kind:   document.KindCluster,
		noun:   "cluster",
		parent: true,
		create: e.dispatchClusterCreate,
		status: func(ctx context.Context, j *job, href string) (*state.OperationState, error) {
			st, err := j.reads.clusterStatus(ctx, href)
			if err != nil {
				return nil, fmt.Errorf("reading status of cluster %s: %w", href, err)
			}
			return e.convertCluster(ctx, j, href, st)
		},
		get: func(ctx context.Context, j *job, href string) ([]*state.OperationState, error) {
			c, err := j.reads.cluster(ctx, href)
			if err != nil {
				return nil, fmt.Errorf("reading cluster %s: %w", href, err)
			}
			s, err := e.convertCluster(ctx, j, href, c.Status)
			if err != nil {
				return nil, err
			}
			return []*state.OperationState{s, specState("clusterServiceClusterSpec", clusterSpecDiffers(j.res, c))}, nil
		},
		patch: func(ctx context.Context, j *job, href string) error {
			if err := checkClusterPatch(j.res); err != nil {
				return err
			}
			_, err := e.cs.PatchCluster(ctx, href, clusterPatch(j.res))
			return err
		},
		delete:      e.cs.DeleteCluster,
		uncommitted: (*document.Resource).PendingClusterServiceID,
	}
}

func (e *Engine) convertCluster(ctx context.Context, j *job, href string, st cs.ClusterStatus) (*state.OperationState, error) {
	s, cerr, err := state.ConvertClusterStatus(ctx, e.cs, href, st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return nil, fmt.Errorf("converting status of cluster %s: %w", href, err)
	}
	return state.FromConversion(s, cerr).WithSource("clusterServiceClusterStatus"), nil
}

// clusterPatch carries the fields a cluster update may change.
func clusterPatch(res *document.Resource) cs.ClusterPatch {
	var patch cs.ClusterPatch
	if m, ok := res.NodeDrainTimeoutMinutes(); ok {
		n := int(m)
		patch.NodeDrainGracePeriodMinutes = &n
	}
	if cidrs, ok := res.AuthorizedCIDRs(); ok {
		patch.AuthorizedCIDRs = append([]string{}, cidrs...)
	}
	return patch
}

// clusterSpecDiffers says which field clusterPatch sends that CS does not
// carry yet ("" when it carries them all).
func clusterSpecDiffers(res *document.Resource, c cs.Cluster) string {
	if m, ok := res.NodeDrainTimeoutMinutes(); ok && int64(c.NodeDrainGracePeriodMinutes) != m {
		return fmt.Sprintf("cluster service node drain grace period is %d minutes, want %d", c.NodeDrainGracePeriodMinutes, m)
	}
	if want, ok := res.AuthorizedCIDRs(); ok && !sameSet(want, c.AuthorizedCIDRs) {
		return fmt.Sprintf("cluster service authorized CIDRs are %v, want %v", c.AuthorizedCIDRs, want)
	}
	return ""
}

// sameSet compares string lists as sets.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}
