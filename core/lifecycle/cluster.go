package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
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
// A pending ID written less than DispatchGrace ago belongs to a dispatch
// that may still be running, so that case is deferred to a later tick.
func (e *Engine) dispatchClusterCreate(ctx context.Context, j *job) (outcome, error) {
	pending := j.res.PendingClusterServiceID()
	if pending == "" {
		id, err := e.newClusterID()
		if err != nil {
			return outcomeSkipped, err
		}
		href := cs.ClusterHref(id)
		res, wrote, err := e.mutateResource(ctx, j.res, func(r *document.Resource) (bool, error) {
			if r.PendingClusterServiceID() != "" || r.ClusterServiceID() != "" {
				return false, nil
			}
			return true, r.SetPendingClusterServiceID(href)
		})
		if err != nil {
			return outcomeSkipped, fmt.Errorf("persisting pending cluster ID: %w", err)
		}
		if !wrote {
			return outcomeDeferred, fmt.Errorf("%w: another dispatcher chose the cluster ID first", errRetryLater)
		}
		j.res, pending = res, href
		j.log.Info("pending cluster ID persisted", "pending_cluster_service_id", href)
	} else if written := time.Unix(j.res.Timestamp, 0); j.res.Timestamp > 0 && e.clock().Sub(written) < e.cfg.DispatchGrace {
		return outcomeDeferred, fmt.Errorf("%w: pending cluster ID %s was written at %s and may still be in flight",
			errRetryLater, pending, written.UTC().Format(time.RFC3339))
	}

	href, err := e.adoptOrPostCluster(ctx, j, pending)
	if err != nil {
		return outcomeSkipped, err
	}
	res, _, err := e.mutateResource(ctx, j.res, func(r *document.Resource) (bool, error) {
		if r.ClusterServiceID() != "" {
			return false, nil
		}
		r.SetClusterServiceID(href)
		return true, r.SetPendingClusterServiceID("")
	})
	if err != nil {
		return outcomeSkipped, fmt.Errorf("recording cluster service ID %s: %w", href, err)
	}
	if res != nil {
		j.res = res
	}
	return outcomeDispatched, nil
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
	case isStatus(err, http.StatusConflict):
		j.log.Info("cluster already exists in clusters service; adopting it", "cluster_service_id", pending)
		return pending, nil
	case err != nil:
		return "", fmt.Errorf("creating cluster %s: %w", pending, err)
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

// dispatchClusterUpdate PATCHes the fields a cluster update may change and
// records the cluster's href as the operation's internalId.
func (e *Engine) dispatchClusterUpdate(ctx context.Context, j *job) (outcome, error) {
	href, err := e.updateTarget(ctx, j)
	if href == "" {
		return outcomeSkipped, err
	}
	var patch cs.ClusterPatch
	if m, ok := j.res.NodeDrainTimeoutMinutes(); ok {
		n := int(m)
		patch.NodeDrainGracePeriodMinutes = &n
	}
	if cidrs, ok := j.res.AuthorizedCIDRs(); ok {
		patch.AuthorizedCIDRs = append([]string{}, cidrs...)
	}
	if _, err := e.cs.PatchCluster(ctx, href, patch); err != nil {
		if refused(err, "is in state", "can't update") {
			return outcomeDeferred, fmt.Errorf("%w: %w", errRetryLater, err)
		}
		return outcomeSkipped, fmt.Errorf("updating cluster %s: %w", href, err)
	}
	return e.recordInternalID(ctx, j, href)
}

// recordInternalID stores href as the operation's internalId: the marker
// that its CS call was made.
func (e *Engine) recordInternalID(ctx context.Context, j *job, href string) (outcome, error) {
	op, _, err := e.mutateOperation(ctx, j.op, func(o *document.OperationDocument) (bool, error) {
		if o.Properties.InternalID != "" || o.Properties.Status.IsTerminal() {
			return false, nil
		}
		o.Properties.InternalID = href
		return true, nil
	})
	if err != nil {
		return outcomeSkipped, fmt.Errorf("recording internal ID %s: %w", href, err)
	}
	if op != nil {
		j.op = op
	}
	return outcomeDispatched, nil
}

func (e *Engine) pollClusterCreate(ctx context.Context, j *job) (pollResult, error) {
	href := j.res.ClusterServiceID()
	st, err := e.cs.GetClusterStatus(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading status of cluster %s: %w", href, err)
	}
	return e.convertCluster(ctx, j, href, st)
}

func (e *Engine) convertCluster(ctx context.Context, j *job, href string, st cs.ClusterStatus) (pollResult, error) {
	s, cerr, err := state.ConvertClusterStatus(ctx, e.cs, href, st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return pollResult{}, fmt.Errorf("converting status of cluster %s: %w", href, err)
	}
	return pollResult{status: s, err: cerr}, nil
}

// pollClusterUpdate reads the cluster once: its state, and whether CS
// already carries what the update asked for (Updating until it does).
func (e *Engine) pollClusterUpdate(ctx context.Context, j *job) (pollResult, error) {
	href := j.op.Properties.InternalID
	c, err := e.cs.GetCluster(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading cluster %s: %w", href, err)
	}
	r, err := e.convertCluster(ctx, j, href, c.Status)
	if err != nil || r.status != arm.ProvisioningStateSucceeded {
		return r, err
	}
	if m, ok := j.res.NodeDrainTimeoutMinutes(); ok && int64(c.NodeDrainGracePeriodMinutes) != m {
		r.status = arm.ProvisioningStateUpdating
	}
	if want, ok := j.res.AuthorizedCIDRs(); ok && !sameSet(want, c.AuthorizedCIDRs) {
		r.status = arm.ProvisioningStateUpdating
	}
	return r, nil
}

// sameSet compares string lists as sets.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// isStatus reports whether err is a CS error with this HTTP status.
func isStatus(err error, status int) bool {
	s, _ := csFailure(err)
	return s == status
}

// refused reports whether err is a CS 400 whose reason contains every one
// of the phrases (case-insensitive): how ARO-HCP recognises the refusals
// it tolerates.
func refused(err error, phrases ...string) bool {
	s, reason := csFailure(err)
	if s != http.StatusBadRequest {
		return false
	}
	reason = strings.ToLower(reason)
	for _, p := range phrases {
		if !strings.Contains(reason, strings.ToLower(p)) {
			return false
		}
	}
	return true
}

// csFailure returns the status and reason of a CS error (0 otherwise).
func csFailure(err error) (int, string) {
	var ce *cs.Error
	if errors.As(err, &ce) {
		return ce.Status, ce.Reason
	}
	return 0, ""
}
