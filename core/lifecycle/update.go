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
// ARM never sees one without the other. The first attempt uses the
// resource the job holds; a 412 (or the resource gone meanwhile) re-reads
// both and tries once more; a second failure is left for the next tick
// (errRetryLater).
//
// A terminal operation is never rewritten here: once Succeeded, Failed or
// Canceled, only the notification URI may still change. On success j.op
// and j.res are the documents as written, and a terminal status is
// notified.
func (e *Engine) updateOperationStatus(ctx context.Context, j *job, status arm.ProvisioningState, cerr *arm.CloudErrorBody, t *tally) (bool, error) {
	op, res := j.op, j.res
	for attempt := 0; ; attempt++ {
		p := &op.Properties
		if p.Status.IsTerminal() || !state.NeedToPatchOperation(p.Status, p.Error, p.NotificationURI, status, cerr) {
			j.op = op
			return false, nil
		}
		rendered, ops, err := e.statusBatch(op, res, status, cerr)
		if err != nil {
			return false, err
		}
		items, err := e.store.Batch(ctx, op.PartitionKey, ops)
		if err == nil {
			return true, e.written(ctx, j, rendered, ops, items, p.Status, t)
		}
		if !staleRead(err) {
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
		if ext := op.Properties.ExternalID; ext != "" {
			if res, err = e.readResource(ctx, op.PartitionKey, ext); err != nil {
				return false, err
			}
			j.res = res
		}
	}
}

// staleRead reports whether a status batch failed because a document
// changed since it was read: an etag mismatch, or the resource (step 1)
// deleted meanwhile.
func staleRead(err error) bool {
	if errors.Is(err, store.ErrPreconditionFailed) {
		return true
	}
	var be *store.BatchError
	return errors.As(err, &be) && be.Index == 1 && errors.Is(err, store.ErrNotFound)
}

// written takes in a successful status batch: j.op and j.res become the
// documents as stored, and a terminal status is notified. rendered is the
// operation the batch wrote, items what the store answered.
func (e *Engine) written(ctx context.Context, j *job, rendered *document.OperationDocument, ops []store.BatchOp, items []store.Item, from arm.ProvisioningState, t *tally) error {
	op, err := rendered.Replaced(items[0].Body)
	if err != nil {
		return fmt.Errorf("reading operation %s as written: %w", rendered.Name(), err)
	}
	to := op.Properties.Status
	j.op = op
	if len(ops) > 1 {
		res, err := document.ParseResource(items[1].Body)
		if err != nil {
			return fmt.Errorf("parsing resource %s as written: %w", op.Properties.ExternalID, err)
		}
		j.res = res
	}
	e.transition(ctx, j, from, len(ops) > 1)
	if to.IsTerminal() && op.Properties.NotificationURI != "" {
		e.notify(ctx, j, t)
	}
	return nil
}

// statusBatch builds the batch steps: the operation first, then the
// resource when ARO-HCP would update it. It also returns the operation
// with its new status, as rendered into the first step.
func (e *Engine) statusBatch(op *document.OperationDocument, res *document.Resource, status arm.ProvisioningState, cerr *arm.CloudErrorBody) (*document.OperationDocument, []store.BatchOp, error) {
	c := op.Clone()
	c.Properties.SetStatus(e.clock(), status, cerr)
	body, err := c.MarshalReplace()
	if err != nil {
		return nil, nil, fmt.Errorf("rendering operation %s: %w", op.Name(), err)
	}
	ops := []store.BatchOp{{Kind: store.OpReplace, ID: op.ID, Body: body, IfMatch: op.ETag}}
	step, err := resourceStatusStep(op, res, status)
	if err != nil {
		return nil, nil, err
	}
	if step != nil {
		ops = append(ops, *step)
	}
	return c, ops, nil
}

// resourceStatusStep is the resource half of a status write, or nil when
// it is skipped: no externalId, the resource is gone (res nil), it belongs
// to another operation (always so for credential operations), or it
// already shows this non-terminal state. res is the resource externalId
// names, as last read.
func resourceStatusStep(op *document.OperationDocument, res *document.Resource, status arm.ProvisioningState) (*store.BatchOp, error) {
	ext := op.Properties.ExternalID
	if ext == "" {
		return nil, nil
	}
	if _, err := op.TargetKind(); err != nil {
		return nil, fmt.Errorf("operation %s: %w: %w", op.Name(), errMalformed, err)
	}
	if document.PartitionKey(subscriptionOf(ext)) != op.PartitionKey {
		return nil, fmt.Errorf("operation %s: %w: externalId %q is outside partition %s", op.Name(), errMalformed, ext, op.PartitionKey)
	}
	if res == nil {
		return nil, nil
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
