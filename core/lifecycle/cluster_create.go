package lifecycle

import (
	"context"
	"encoding/base32"
	"fmt"
	"io"
	"strings"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// clusterCreate is a cluster's create. Its dispatch creates the CS
// cluster of j.res exactly once, even when batches are redelivered, run
// concurrently or cut short:
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
//
// Its poll, deadline and failure are every create's (creation, create.go).
type clusterCreate struct {
	creation          // what every create shares (create.go), but its dispatch
	c        *cluster // the cluster's CS calls (cluster.go)
}

// dispatch is steps 1 to 4 above; recording the ID is
// recordClusterServiceID (create.go).
func (h clusterCreate) dispatch(ctx context.Context, _ *run, j *job) (outcome, error) {
	e := h.e
	pending := j.res.PendingClusterServiceID()
	if pending == "" {
		id, err := newClusterID(e.random)
		if err != nil {
			return outcomeSkipped, err
		}
		href := cs.ClusterHref(id)
		now := e.clock()
		res, wrote, err := e.mutateResource(ctx, j, func(r *document.Resource) (bool, error) {
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
		j.log.InfoContext(ctx, "pending cluster ID persisted", "pending_cluster_service_id", href)
	} else if chosen := pendingChosenAt(j); e.clock().Sub(chosen) < e.cfg.PendingIDGrace {
		return outcomeSkipped, retryLater("pending cluster ID %s was chosen at %s and may still be in flight",
			pending, chosen.UTC().Format(time.RFC3339))
	}

	href, err := h.adoptOrPost(ctx, j, pending)
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

// adoptOrPost returns the href of the CS cluster of j.res, creating it
// with the pending href's ID when CS has none.
func (h clusterCreate) adoptOrPost(ctx context.Context, j *job, pending string) (string, error) {
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
	found, err := h.c.cs.ListClusters(ctx, clusterSearch(ref))
	if err != nil {
		return "", fmt.Errorf("searching clusters service for %s: %w", j.res.ResourceID(), err)
	}
	var matches []cs.Cluster
	for _, c := range found { // CS search semantics vary; trust only an exact match
		if sameAzureResource(c.Azure, ref) {
			matches = append(matches, c)
		}
	}
	switch len(matches) {
	case 0:
	case 1:
		href := clusterHrefOf(matches[0])
		j.log.InfoContext(ctx, "adopting existing cluster", "cluster_service_id", href)
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
	if ref.TenantID, err = h.tenantOf(ctx, j); err != nil {
		return "", err
	}
	v := j.res.Version()
	spec := cs.ClusterSpec{ID: id, Name: j.res.Name(), Region: j.res.Location(),
		VersionID: v.ID, ChannelGroup: v.ChannelGroup, Azure: ref}
	return h.post(ctx, j, spec, pending)
}

// post creates the cluster spec asks for. CS's 409 is checked before it
// is believed: the cluster at the pending ID is adopted only when it is
// this resource's. When CS has none there, the POST is made once more; a
// second 409 fails the create only when CS lists another resource's
// cluster of the resource's name (nameTaken). A 409 for the ID
// beside a 404 for it is CS contradicting itself (a misrouted read, say):
// no evidence either way, so the dispatch is retried.
func (h clusterCreate) post(ctx context.Context, j *job, spec cs.ClusterSpec, pending string) (string, error) {
	for attempt := 1; ; attempt++ {
		c, err := h.c.cs.PostCluster(ctx, spec)
		if err == nil {
			j.log.InfoContext(ctx, "cluster created in clusters service", "cluster_service_id", clusterHrefOf(c))
			return clusterHrefOf(c), nil
		}
		if cs.Classify(err) != cs.Exists {
			return "", fmt.Errorf("creating cluster %s: %w", pending, refusedBy(err, "cluster", "create"))
		}
		found, getErr := h.c.cs.GetCluster(ctx, pending)
		switch {
		case getErr == nil && sameAzureResource(found.Azure, spec.Azure):
			j.log.InfoContext(ctx, "cluster already exists in clusters service; it is this resource's, adopting it",
				"cluster_service_id", pending)
			return pending, nil
		case getErr == nil:
			return "", conflict("cluster", spec.Name, fmt.Sprintf("Clusters Service's cluster %s belongs to %s",
				pending, azureResourceName(found.Azure)), err)
		case cs.Classify(getErr) != cs.Absent:
			return "", fmt.Errorf("checking clusters service's 409 for cluster %s: %w", pending, getErr)
		case attempt == 1:
			j.log.InfoContext(ctx, "clusters service answered 409 but has no cluster at the pending ID; posting again",
				append(cs.CallAttrs(err), "cluster_service_id", pending)...)
		default:
			return "", h.nameTaken(ctx, spec, pending, err)
		}
	}
}

// nameTaken is the error of a second 409 beside no cluster at the pending
// ID. CS's words are not read: only a cluster CS lists under the
// resource's name that is another resource's makes it a name conflict the
// customer must resolve; else there is no evidence either way, and the
// dispatch is retried.
func (h clusterCreate) nameTaken(ctx context.Context, spec cs.ClusterSpec, pending string, conflictErr error) error {
	named, err := h.c.cs.ListClusters(ctx, "name = "+searchQuote(spec.Name)) // the name as it was posted
	if err != nil {
		return fmt.Errorf("clusters service answered 409 for cluster %s twice; searching it for clusters named %s: %w", pending, spec.Name, err)
	}
	for _, c := range named { // CS search semantics vary; trust only an exact match
		if strings.EqualFold(c.Name, spec.Name) && !sameAzureResource(c.Azure, spec.Azure) {
			return conflict("cluster", spec.Name, fmt.Sprintf("Clusters Service's cluster %s of that name belongs to %s", c.ID,
				azureResourceName(c.Azure)), conflictErr)
		}
	}
	return fmt.Errorf("clusters service answered 409 for cluster %s twice but has none there and no other cluster named %s; "+
		"no evidence either way: %w", pending, spec.Name, conflictErr)
}

// sameAzureResource reports whether a CS cluster's Azure reference names
// the same ARM resource; ARM compares names without regard to case.
func sameAzureResource(a, b cs.AzureRef) bool {
	return strings.EqualFold(a.SubscriptionID, b.SubscriptionID) &&
		strings.EqualFold(a.ResourceGroupName, b.ResourceGroupName) &&
		strings.EqualFold(a.ResourceName, b.ResourceName)
}

func azureResourceName(a cs.AzureRef) string {
	return fmt.Sprintf("subscription %s, resource group %s, name %s", a.SubscriptionID, a.ResourceGroupName, a.ResourceName)
}

// tenantOf is the subscription's tenant, as ARO-HCP sends it to CS; the
// operation's home tenant stands in when no subscription document says.
func (h clusterCreate) tenantOf(ctx context.Context, j *job) (string, error) {
	sub := document.SubscriptionOf(j.res.ResourceID())
	item, err := h.e.store.Get(ctx, j.op.PartitionKey, document.CosmosID(document.SubscriptionResourceID(sub)))
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
	q := func(s string) string { return searchQuote(strings.ToLower(s)) }
	return "azure.subscription_id = " + q(ref.SubscriptionID) +
		" and azure.resource_group_name = " + q(ref.ResourceGroupName) +
		" and azure.resource_name = " + q(ref.ResourceName)
}

// searchQuote is s as a CS search string literal.
func searchQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// clusterIDEncoding is base32hex in lower case: the alphabet [0-9a-v] of
// the KSUID-like IDs ARO-HCP chooses for CS clusters.
var clusterIDEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// newClusterID returns 32 characters of [0-9a-v] (160 random bits).
func newClusterID(random io.Reader) (string, error) {
	var b [20]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("generating a cluster ID: %w", err)
	}
	return strings.ToLower(clusterIDEncoding.EncodeToString(b[:])), nil
}
