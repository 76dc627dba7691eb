package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// deleteTarget is the CS href of the object a delete removes: the
// resource's CS ID, one whose create may have reached CS unrecorded (a
// cluster's pending ID), or the href a legacy operation carries. "" means
// CS never had it.
func deleteTarget(j *job) string {
	if j.res != nil {
		if h := j.res.ClusterServiceID(); h != "" {
			return h
		}
		if h := j.a.uncommitted(j.res); h != "" {
			return h
		}
	}
	return j.op.Properties.InternalID
}

// dispatchDelete asks CS to delete the object, then stamps the resource's
// clusterServiceDeletionTimestamp (the marker) and the operation's
// internalId. CS answering 404, or refusing a child because its cluster is
// already uninstalling, both mean the deletion is under way.
func (e *Engine) dispatchDelete(ctx context.Context, j *job, _ *tally) (outcome, error) {
	if href := deleteTarget(j); href != "" {
		err := j.a.delete(ctx, href)
		switch {
		case err == nil, cs.IsNotFound(err):
		case cs.IsAlreadyUninstalling(err):
			j.log.Info("parent cluster is already uninstalling; treating the delete as dispatched", "reason", err)
		default:
			return outcomeSkipped, fmt.Errorf("deleting %s %s: %w", j.kind, href, err)
		}
		if _, err := e.recordInternalID(ctx, j, href); err != nil {
			return outcomeSkipped, err
		}
	}
	now := e.clock()
	res, _, err := e.mutateResource(ctx, j.log, j.res, func(r *document.Resource) (bool, error) {
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

// pollDelete reads the object being deleted; CS answering 404 completes
// the delete.
func (e *Engine) pollDelete(ctx context.Context, j *job) (pollResult, error) {
	href := deleteTarget(j)
	if href == "" {
		return pollResult{gone: true}, nil
	}
	r, err := j.a.status(ctx, j, href)
	if cs.IsNotFound(err) {
		return pollResult{gone: true}, nil
	}
	if err != nil {
		return pollResult{}, fmt.Errorf("polling deletion of %s %s: %w", j.kind, href, err)
	}
	return r, nil
}

// completeDelete finishes a delete CS has done: soft-delete the direct
// children, then the resource, then mark the operation Succeeded. Children
// go first so that a run cut short finds the resource still there and
// starts over; every step tolerates having been done already.
func (e *Engine) completeDelete(ctx context.Context, j *job, t *tally) error {
	pk, parent := j.op.PartitionKey, j.op.Properties.ExternalID
	if err := e.deleteChildren(ctx, j, pk, parent); err != nil {
		return err
	}
	if j.res != nil {
		if err := e.store.SoftDelete(ctx, pk, j.res.ID()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("soft-deleting %s: %w", parent, err)
		}
		j.log.Info("resource deleted")
		j.res = nil
	}
	changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateSucceeded, nil, t)
	if changed {
		t.changed.Add(1)
	}
	return err
}

// deleteChildren soft-deletes the node pools and external auths directly
// under parent. Deeper descendants and documents that are not resources
// (controller status documents, for instance) are left alone.
func (e *Engine) deleteChildren(ctx context.Context, j *job, pk, parent string) error {
	if !j.a.parent {
		return nil
	}
	var ids []string
	err := e.store.Children(ctx, pk, parent, func(items []store.Item) error {
		for _, it := range items {
			var d struct {
				ID           string `json:"id"`
				ResourceID   string `json:"resourceID"`
				ResourceType string `json:"resourceType"`
			}
			if err := json.Unmarshal(it.Body, &d); err != nil {
				j.log.Warn("skipping an unreadable child document", "error", err)
				continue
			}
			k, err := document.ResourceKind(d.ResourceType)
			if a := e.kinds[k]; err != nil || a == nil || a.parent {
				continue
			}
			if len(d.ResourceID) <= len(parent)+1 || strings.Count(d.ResourceID[len(parent)+1:], "/") != 1 {
				continue
			}
			ids = append(ids, d.ID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing children of %s: %w", parent, err)
	}
	for _, id := range ids {
		if err := e.store.SoftDelete(ctx, pk, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("soft-deleting child %s of %s: %w", id, parent, err)
		}
	}
	if len(ids) > 0 {
		j.log.Info("child resources deleted", "count", len(ids))
	}
	return nil
}
