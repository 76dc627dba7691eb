package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
	"github.com/hcpops/hcpops/core/store"
)

// deletion is what every delete shares: its dispatch is done once the
// resource carries clusterServiceDeletionTimestamp (ARO-HCP writes no
// internalId on a delete), or at once on the legacy path; it must finish
// by the resource's deleteOperationCompletionDeadline (the legacy path
// has none); and it fails with the failing source's own message. Its
// dispatch and poll are the same for every kind but for k's calls.
type deletion struct {
	e *Engine
	k kind
}

func (deletion) dispatched(j *job) bool {
	if legacyDelete(j) {
		return true // sent to CS by the frontend that wrote it
	}
	_, ok := j.res.ClusterServiceDeletionTimestamp()
	return ok
}

func (deletion) failure() (string, state.FailureMessage) {
	return arm.CodeInternalServerError, state.Bare
}

// legacyDelete reports a Delete written by a frontend from before the
// new deletion approach: its usesNew*DeletionApproach flag for the
// target's kind is false. That frontend deleted the object in CS itself
// and stored its href as internalId; ARO-HCP then only polls it.
func legacyDelete(j *job) bool {
	p := &j.op.Properties
	if p.Request != document.RequestDelete {
		return false
	}
	switch j.kind {
	case document.KindCluster:
		return !p.UsesNewClusterDeletionApproach
	case document.KindNodePool:
		return !p.UsesNewNodePoolDeletionApproach
	case document.KindExternalAuth:
		return !p.UsesNewExternalAuthDeletionApproach
	}
	return false
}

// deleteTarget is the CS href of the object a delete removes: the href a
// legacy operation carries, else the resource's CS ID, or the pending ID
// of a cluster whose create may have reached CS unrecorded. "" means CS
// never had it.
func deleteTarget(j *job) string {
	if h := j.op.Properties.InternalID; h != "" && legacyDelete(j) {
		return h
	}
	if j.res != nil {
		if h := j.res.ClusterServiceID(); h != "" {
			return h
		}
		if h := j.res.PendingClusterServiceID(); h != "" {
			return h
		}
	}
	return j.op.Properties.InternalID
}

// liveDeleteTarget is deleteTarget, or for a node pool or external auth
// with no recorded CS ID the href its create would have given it: that
// create may have reached CS unrecorded (it records after its POST), so
// CS is asked rather than the object assumed absent. "" when the parent
// cluster has no CS object either: then CS cannot have the child.
func (d deletion) liveDeleteTarget(ctx context.Context, j *job, k kind) (string, error) {
	href := deleteTarget(j)
	c, isChild := k.(child)
	if href != "" || legacyDelete(j) || !isChild || j.res == nil {
		return href, nil
	}
	parentID, err := document.ParentClusterID(j.res.ResourceID())
	if err != nil {
		return "", fmt.Errorf("%w: %w", errMalformed, err)
	}
	parent, err := d.e.readResource(ctx, j.op.PartitionKey, parentID)
	if err != nil || parent == nil || parent.ClusterServiceID() == "" {
		return "", err
	}
	return c.href(parent.ClusterServiceID(), strings.ToLower(j.res.Name())), nil
}

// dispatch asks CS to delete the object, then stamps the resource's
// clusterServiceDeletionTimestamp, the marker. Only CS's 2xx, or its
// refusing a child while CS's cluster object is uninstalling
// (csrefusal.go), mean the deletion is under way. CS's own 404 to the DELETE is a candidate for
// absence like a poll's (absence.go): not dispatched, the DELETE is sent
// again next time, and a tick that corroborates the 404 completes the
// delete. A delete whose create's POST may still land waits that out
// first (createMayLand).
func (d deletion) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	k := d.k
	href, err := d.liveDeleteTarget(ctx, j, k)
	if err != nil {
		return outcomeSkipped, err
	}
	if until, ok := d.createMayLand(j, href); ok {
		return outcomeSkipped, retryLater("a create POST for %s may still reach clusters service until %s; deleting after it",
			href, until.UTC().Format(time.RFC3339))
	}
	if href != "" {
		err := k.remove(ctx, href)
		switch {
		case err == nil:
		case cs.Classify(err) == cs.Absent:
			r.wave.holdDispatch(j, href, completesDelete())
			return outcomeSkipped, retryLater("clusters service answered its own 404 to the DELETE of %s: "+
				"not dispatched until another answer corroborates it", href)
		default:
			// A child refused while CS's cluster is uninstalling goes with
			// the cluster: as good as dispatched.
			st, ok, readErr := d.e.after400(ctx, href, err)
			_, isChild := k.(child)
			switch {
			case readErr != nil:
				return outcomeSkipped, readErr
			case !ok || !isChild || st.cluster != cs.ClusterStateUninstalling:
				return outcomeSkipped, fmt.Errorf("deleting %s %s: %w", j.kind, href, notNowOrRefused(err, st, ok, k.noun(), "delete"))
			}
			j.log.InfoContext(ctx, "parent cluster is already uninstalling; treating the delete as dispatched", "reason", err)
		}
	}
	now := d.e.clock()
	res, _, err := d.e.mutateResource(ctx, j, func(r *document.Resource) (bool, error) {
		if _, ok := r.ClusterServiceDeletionTimestamp(); ok {
			return false, nil
		}
		r.SetClusterServiceDeletionTimestamp(now)
		return true, nil
	})
	if err != nil {
		return outcomeSkipped, fmt.Errorf("stamping the clusters service deletion of %s: %w", j.res.ResourceID(), err)
	}
	j.res = res
	return outcomeDispatched, nil
}

// createMayLand reports whether a create POST for the object at href may
// still reach CS, and until when: the resource records no CS ID yet (a
// cluster's pending ID, a child's deterministic href), so a create
// dispatched before j (a delete, or an update that reads the href) was
// accepted may be in flight. Such a POST is bounded by PendingIDGrace (the
// same bound a second cluster dispatch waits out), counted from the later
// of the pending ID's choice and j's start: a create is not dispatched
// once another operation owns its resource. Waiting it out means the
// DELETE (or the update's read) meets what the POST made, so nothing is
// left behind in CS.
func (d deletion) createMayLand(j *job, href string) (time.Time, bool) {
	if href == "" || legacyDelete(j) || j.res == nil || j.res.ClusterServiceID() != "" {
		return time.Time{}, false
	}
	from := j.op.Properties.StartTime
	if j.res.PendingClusterServiceID() != "" {
		if chosen := pendingChosenAt(j); chosen.After(from) {
			from = chosen
		}
	}
	until := from.Add(d.e.cfg.PendingIDGrace)
	return until, d.e.clock().Before(until)
}

// maxResends bounds the DELETEs a delete sends again to an object CS
// shows alive and not uninstalling.
const maxResends = 3

// resend sends a delete's DELETE again: CS shows its object ready, not
// uninstalling, so the first DELETE never reached it (a misrouted answer,
// a POST that landed after it). Bounded by maxResends per operation in
// this process, and spaced by PendingIDGrace from the marker, so an
// uninstall CS is about to report is not asked twice.
func (d deletion) resend(ctx context.Context, j *job, k kind, href string) {
	sent, ok := j.res.ClusterServiceDeletionTimestamp()
	if !ok || d.e.clock().Sub(sent) < d.e.cfg.PendingIDGrace {
		return
	}
	n, again := d.e.resent.next(docRef(j.op), d.e.clock(), d.e.cfg.PendingIDGrace)
	if !again {
		return
	}
	if n > maxResends {
		if n == maxResends+1 {
			j.log.WarnContext(ctx, "clusters service still shows the object alive and not uninstalling after the DELETE was sent again; "+
				"left to the deadline", "cluster_service_id", href, "resends", maxResends)
		}
		return
	}
	err := k.remove(ctx, href)
	j.log.WarnContext(ctx, "clusters service shows the object alive and not uninstalling after its DELETE; sent the DELETE again",
		append(cs.CallAttrs(err), "cluster_service_id", href, "resend", n, "error", err)...)
}

// poll reads the object being deleted; CS answering 404 is the
// evidence that completes the delete, once the tick has judged it with
// the rest of its answers (wave.go). A new-approach delete CS never had
// (no href) completes at once: nothing in CS can outlive it. An object CS
// shows alive and not uninstalling gets its DELETE again (resend).
func (d deletion) poll(ctx context.Context, j *job) (pollResult, error) {
	k := d.k
	href, err := d.liveDeleteTarget(ctx, j, k)
	if err != nil {
		return pollResult{}, err
	}
	if href == "" && !legacyDelete(j) {
		return pollResult{gone: true}, nil
	}
	s, err := k.status(ctx, j, href)
	if cs.Classify(err) == cs.Absent {
		return pollResult{gone: true, absent: href}, nil
	}
	if err != nil {
		return pollResult{}, fmt.Errorf("polling deletion of %s %s: %w", j.kind, href, err)
	}
	if j.alive && !legacyDelete(j) {
		d.resend(ctx, j, k, href)
	}
	return polledStates(s), nil
}

// completeDelete finishes a delete CS has done as ARO-HCP's
// SetDeleteOperationAsCompleted does: soft-delete the resource, then every
// direct child document, then mark the operation Succeeded (and notify).
// The first failure stops the run with the operation still non-terminal;
// the next tick runs it again, and every step done already is a no-op (a
// missing or soft-deleted document counts as deleted).
func (r *run) completeDelete(ctx context.Context, j *job) error {
	pk, target := j.op.PartitionKey, j.op.Properties.ExternalID
	if j.res != nil {
		if err := r.softDelete(ctx, j.log, pk, j.res.ID()); err != nil {
			return fmt.Errorf("soft-deleting %s: %w", target, err)
		}
		j.log.InfoContext(ctx, "resource deleted")
		j.res = nil
	}
	if err := r.deleteChildren(ctx, j, pk, target); err != nil {
		return err
	}
	if legacyDelete(j) {
		j.log.InfoContext(ctx, "delete completed by the legacy deletion approach (the frontend deleted it in clusters service)")
	}
	_, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateSucceeded, nil)
	return err
}

// softDelete soft-deletes a document; one that is gone or soft-deleted
// already counts as done. A store that reads before it replaces answers
// 412 when another writer got there in between, most often the document's
// own delete completing in the same tick (a cluster's child whose implicit
// delete finished too): writeGuarded's re-read tells that from a live
// change, which gets one more attempt.
func (e *Engine) softDelete(ctx context.Context, log *slog.Logger, pk, id string) error {
	gone := func(err error) (string, bool, error) {
		if errors.Is(err, store.ErrNotFound) {
			return id, false, nil
		}
		return id, err == nil, err
	}
	_, _, err := writeGuarded(ctx, log, id, func(id string) (string, bool, error) {
		return gone(e.store.SoftDelete(ctx, pk, id))
	}, isPreconditionFailed, func(ctx context.Context, id string) (string, bool, error) {
		_, err := e.store.Get(ctx, pk, id)
		return gone(err)
	})
	return err
}

// childDoc is what delete completion reads of a document under a resource.
type childDoc struct {
	ID           string `json:"id"`
	ResourceID   string `json:"resourceID"`
	ResourceType string `json:"resourceType"`
}

// directChild reports whether d sits exactly one type/name level below
// parent (the query matched the prefix case-insensitively).
func (d childDoc) directChild(parent string) bool {
	rest := d.ResourceID[min(len(parent)+1, len(d.ResourceID)):]
	return len(d.ResourceID) > len(parent)+1 && strings.Count(rest, "/") == 1
}

// controllerStatus reports a controller-status document
// (<parent>/hcpOpenShiftControllers/<name>): ARO-HCP's delete leaves those
// to its orphan sweeper.
func (d childDoc) controllerStatus() bool {
	t := d.ResourceType
	return strings.EqualFold(t[strings.LastIndex(t, "/")+1:], controllersType)
}

const controllersType = "hcpOpenShiftControllers"

// children lists the direct child documents of target, of any type.
func (e *Engine) children(ctx context.Context, j *job, pk, target string) ([]childDoc, error) {
	var out []childDoc
	err := e.store.Children(ctx, pk, target, func(items []store.Item) error {
		for _, it := range items {
			var d childDoc
			if err := json.Unmarshal(it.Body, &d); err != nil {
				j.log.WarnContext(ctx, "skipping an unreadable child document", "error", err)
				continue
			}
			if d.directChild(target) {
				out = append(out, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing children of %s: %w", target, err)
	}
	return out, nil
}

// deleteChildren soft-deletes every direct child document of target, of
// any resource type, except controller-status documents. Grandchildren are
// left to their own parent's delete, as upstream leaves them.
func (e *Engine) deleteChildren(ctx context.Context, j *job, pk, target string) error {
	kids, err := e.children(ctx, j, pk, target)
	if err != nil {
		return err
	}
	n := 0
	for _, d := range kids {
		if d.controllerStatus() {
			continue
		}
		if err := e.softDelete(ctx, j.log, pk, d.ID); err != nil {
			return fmt.Errorf("soft-deleting child %s of %s: %w", d.ResourceID, target, err)
		}
		n++
	}
	if n > 0 {
		j.log.InfoContext(ctx, "child documents deleted", "count", n)
	}
	return nil
}
