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

// updateOperationStatus WRITES a new status on j.op, with ARO-HCP's
// UpdateOperationStatus semantics: nothing is written unless
// state.NeedToPatchOperation says so; otherwise the operation and the
// resource's provisioningState are replaced in ONE transactional batch, so
// ARM never sees one without the other. The write is ETag-guarded
// (writeGuarded): a stale read re-reads both and tries once more.
//
// A terminal operation is never rewritten here: once Succeeded, Failed or
// Canceled, only the notification URI may still change. On success j.op
// and j.res are the documents as written, and a terminal status is
// notified.
func (r *run) updateOperationStatus(ctx context.Context, j *job, status arm.ProvisioningState, cerr *arm.CloudErrorBody) (bool, error) {
	w, err := r.writeStatus(ctx, j, status, cerr)
	if w.status {
		r.count.changed.Add(1)
	}
	if w.notified {
		r.count.notified.Add(1)
	}
	return w.status, err
}

// written is what writeStatus did: wrote the status, and delivered the
// notification of it.
type written struct{ status, notified bool }

// writeStatus is updateOperationStatus without the run's counts: an
// operator's abandon (abandon.go) writes with it too.
func (w *writer) writeStatus(ctx context.Context, j *job, status arm.ProvisioningState, cerr *arm.CloudErrorBody) (written, error) {
	if err := w.wholeForStatus(ctx, j, status, cerr); err != nil {
		return written{}, err
	}
	var from arm.ProvisioningState
	out, wrote, err := writeGuarded(ctx, j.log, statusDocs{op: j.op, res: j.res}, func(d statusDocs) (statusDocs, bool, error) {
		p := &d.op.Properties
		if !statusWanted(d.op, status, cerr) {
			return d, false, nil
		}
		from = p.Status
		withRes, err := resourceStatusWanted(d.op, d.res, status)
		if err != nil {
			return d, false, err
		}
		rendered, ops, err := w.statusBatch(d.op, d.res, status, cerr, withRes)
		if err != nil {
			return d, false, err
		}
		items, err := w.store.Batch(ctx, d.op.PartitionKey, ops)
		if err != nil {
			return d, false, fmt.Errorf("writing status %s of operation %s: %w", status, d.op.Name(), err)
		}
		w, err := asWritten(rendered, d.res, ops, items)
		if err != nil {
			return d, true, err // written, but not readable back
		}
		return w, true, nil
	}, staleRead, w.rereadStatusDocs)
	if out.op != nil {
		j.op, j.res = out.op, out.res
	}
	if err != nil || !wrote {
		return written{status: wrote}, err
	}
	to := j.op.Properties.Status
	w.transition(ctx, j, from, out.resourceWritten)
	notified := to.IsTerminal() && j.op.Properties.NotificationURI != "" && w.notify(ctx, j)
	return written{status: true, notified: notified}, nil
}

// wholeForStatus reads j.res whole (whole) when the status write will
// replace it too; a write of the operation alone needs no more of it than
// the view's projection holds.
func (w *writer) wholeForStatus(ctx context.Context, j *job, status arm.ProvisioningState, cerr *arm.CloudErrorBody) error {
	if !statusWanted(j.op, status, cerr) {
		return nil
	}
	if withRes, err := resourceStatusWanted(j.op, j.res, status); err != nil || !withRes {
		return nil // the write says why, or writes the operation alone
	}
	return w.whole(ctx, j)
}

// statusWanted says whether op's status must be written to become status
// and cerr: a terminal operation stays as it is, and a write that would
// change nothing ARM reads is not made.
func statusWanted(op *document.OperationDocument, status arm.ProvisioningState, cerr *arm.CloudErrorBody) bool {
	p := &op.Properties
	return !p.Status.IsTerminal() && state.NeedToPatchOperation(p.Status, p.Error, p.NotificationURI, status, cerr)
}

// statusDocs are the two documents a status write replaces together.
type statusDocs struct {
	op  *document.OperationDocument
	res *document.Resource // nil when gone
	// resourceWritten: the batch replaced res too.
	resourceWritten bool
}

// rereadStatusDocs reads both documents again after a stale write.
func (w *writer) rereadStatusDocs(ctx context.Context, d statusDocs) (statusDocs, bool, error) {
	op, err := w.readOperation(ctx, d.op.PartitionKey, d.op.ID)
	if err != nil || op == nil {
		return statusDocs{}, false, err // expired or deleted: nothing left to update
	}
	res := d.res
	if ext := op.Properties.ExternalID; ext != "" {
		if res, err = w.readResource(ctx, op.PartitionKey, ext); err != nil {
			return statusDocs{}, false, err
		}
	}
	return statusDocs{op: op, res: res}, true, nil
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

// resourceStatusWanted says whether the status write replaces the
// resource too (resourceStatusStep says when).
func resourceStatusWanted(op *document.OperationDocument, res *document.Resource, status arm.ProvisioningState) (bool, error) {
	ext := op.Properties.ExternalID
	if ext == "" {
		return false, nil
	}
	if _, err := op.TargetKind(); err != nil {
		return false, fmt.Errorf("operation %s: %w: %w", op.Name(), errMalformed, err)
	}
	if document.PartitionKey(document.SubscriptionOf(ext)) != op.PartitionKey {
		return false, fmt.Errorf("operation %s: %w: externalId %q is outside partition %s", op.Name(), errMalformed, ext, op.PartitionKey)
	}
	if res == nil || !strings.EqualFold(res.ActiveOperationID(), op.Name()) {
		return false, nil
	}
	return res.ProvisioningState() != status || status.IsTerminal(), nil
}

// asWritten is what a successful status batch stored: rendered is the
// operation it wrote, res the resource as read, items the store's answer.
func asWritten(rendered *document.OperationDocument, res *document.Resource, ops []store.BatchOp, items []store.Item) (statusDocs, error) {
	op, err := rendered.Replaced(items[0].Body)
	if err != nil {
		return statusDocs{}, fmt.Errorf("reading operation %s as written: %w", rendered.Name(), err)
	}
	if len(ops) > 1 {
		if res, err = document.ParseResource(items[1].Body); err != nil {
			return statusDocs{}, fmt.Errorf("parsing resource %s as written: %w", op.Properties.ExternalID, err)
		}
	}
	return statusDocs{op: op, res: res, resourceWritten: len(ops) > 1}, nil
}

// statusBatch builds the batch steps: the operation first, then, with
// withRes (resourceStatusWanted's answer), the resource. It also returns
// the operation with its new status, as rendered into the first step.
func (w *writer) statusBatch(op *document.OperationDocument, res *document.Resource, status arm.ProvisioningState, cerr *arm.CloudErrorBody, withRes bool) (*document.OperationDocument, []store.BatchOp, error) {
	c := op.Clone()
	c.Properties.SetStatus(w.clock(), status, cerr)
	body, err := c.MarshalReplace()
	if err != nil {
		return nil, nil, fmt.Errorf("rendering operation %s: %w", op.Name(), err)
	}
	ops := []store.BatchOp{{Kind: store.OpReplace, ID: op.ID, Body: body, IfMatch: op.ETag}}
	if withRes {
		step, err := resourceStatusStep(op, res, status)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, *step)
	}
	return c, ops, nil
}

// resourceStatusStep is the resource half of a status write, made only
// when resourceStatusWanted says so (it is skipped when there is no
// externalId, the resource is gone, it belongs to another operation, as
// always for credential operations, or it already shows this non-terminal
// state). res is the resource externalId names, as last read.
func resourceStatusStep(op *document.OperationDocument, res *document.Resource, status arm.ProvisioningState) (*store.BatchOp, error) {
	ext := op.Properties.ExternalID
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
