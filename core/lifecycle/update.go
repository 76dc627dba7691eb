package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
	"github.com/hcpops/hcpops/core/store"
)

// updateOperationStatus records a new status on j.op, with ARO-HCP's
// UpdateOperationStatus semantics: nothing is written unless
// state.NeedToPatchOperation says so; otherwise the operation and the
// resource's provisioningState are replaced in ONE transactional batch, so
// ARM never sees one without the other. A 412 re-reads both and tries once
// more; a second one is left for the next tick (errRetryLater).
//
// A terminal operation is never rewritten here: once Succeeded, Failed or
// Canceled, only the notification URI may still change. On success j.op is
// the document as written, and a terminal status is notified.
func (e *Engine) updateOperationStatus(ctx context.Context, j *job, status arm.ProvisioningState, cerr *arm.CloudErrorBody, t *tally) (bool, error) {
	op := j.op
	for attempt := 0; ; attempt++ {
		p := &op.Properties
		if p.Status.IsTerminal() || !state.NeedToPatchOperation(p.Status, p.Error, p.NotificationURI, status, cerr) {
			j.op = op
			return false, nil
		}
		ops, err := e.statusBatch(ctx, op, status, cerr)
		if err != nil {
			return false, err
		}
		items, err := e.store.Batch(ctx, op.PartitionKey, ops)
		if err == nil {
			written, err := document.ParseOperation(items[0].Body)
			if err != nil {
				return false, fmt.Errorf("parsing operation %s as written: %w", op.Name(), err)
			}
			j.op = written
			j.log.Info("operation status updated", "from", p.Status, "to", status, "resource_updated", len(ops) > 1)
			if status.IsTerminal() && written.Properties.NotificationURI != "" {
				e.notify(ctx, j, t)
			}
			return true, nil
		}
		if !errors.Is(err, store.ErrPreconditionFailed) {
			return false, fmt.Errorf("writing status %s of operation %s: %w", status, op.Name(), err)
		}
		if attempt > 0 {
			return false, fmt.Errorf("writing status %s of operation %s: %w: %w", status, op.Name(), errRetryLater, err)
		}
		j.log.Debug("etag conflict on status write; re-reading", "error", err)
		fresh, err := e.readOperation(ctx, op.PartitionKey, op.ID)
		if err != nil {
			return false, err
		}
		if fresh == nil {
			return false, nil // expired or deleted meanwhile: nothing left to update
		}
		op = fresh
	}
}

// statusBatch builds the batch steps: the operation first, then the
// resource when ARO-HCP would update it.
func (e *Engine) statusBatch(ctx context.Context, op *document.OperationDocument, status arm.ProvisioningState, cerr *arm.CloudErrorBody) ([]store.BatchOp, error) {
	c := op.Clone()
	c.Properties.SetStatus(e.clock(), status, cerr)
	body, err := c.MarshalReplace()
	if err != nil {
		return nil, fmt.Errorf("rendering operation %s: %w", op.Name(), err)
	}
	ops := []store.BatchOp{{Kind: store.OpReplace, ID: op.ID, Body: body, IfMatch: op.ETag}}
	step, err := e.resourceStatusStep(ctx, op, status)
	if err != nil {
		return nil, err
	}
	if step != nil {
		ops = append(ops, *step)
	}
	return ops, nil
}

// resourceStatusStep is the resource half of a status write, or nil when
// it is skipped: no externalId, the resource is gone, it belongs to another
// operation (always so for credential operations), or it already shows
// this non-terminal state.
func (e *Engine) resourceStatusStep(ctx context.Context, op *document.OperationDocument, status arm.ProvisioningState) (*store.BatchOp, error) {
	ext := op.Properties.ExternalID
	if ext == "" {
		return nil, nil
	}
	if _, _, err := document.ResourceKindOfID("properties.externalId", ext); err != nil {
		return nil, fmt.Errorf("operation %s: %w: %w", op.Name(), errMalformed, err)
	}
	if document.PartitionKey(subscriptionOf(ext)) != op.PartitionKey {
		return nil, fmt.Errorf("operation %s: %w: externalId %q is outside partition %s", op.Name(), errMalformed, ext, op.PartitionKey)
	}
	res, err := e.readResource(ctx, op.PartitionKey, ext)
	if err != nil || res == nil {
		return nil, err
	}
	if !strings.EqualFold(res.ActiveOperationID(), op.Name()) {
		return nil, nil
	}
	if res.ProvisioningState() == status && !status.IsTerminal() {
		return nil, nil
	}
	c := res.Clone()
	c.SetProvisioningState(status)
	if status.IsTerminal() {
		c.SetActiveOperationID("")
	}
	body, err := c.MarshalReplace()
	if err != nil {
		return nil, fmt.Errorf("rendering resource %s: %w", ext, err)
	}
	return &store.BatchOp{Kind: store.OpReplace, ID: res.ID(), Body: body, IfMatch: res.ETag}, nil
}

// subscriptionOf returns the subscription segment of an ARM ID ("" when
// there is none); the ID has been validated already.
func subscriptionOf(resourceID string) string {
	parts := strings.Split(resourceID, "/")
	for i := 0; i+1 < len(parts); i++ {
		if strings.EqualFold(parts[i], "subscriptions") {
			return parts[i+1]
		}
	}
	return ""
}
