package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Error classes the entry points sort failures by.
var (
	// errRetryLater marks a step that could not finish now for a reason
	// that will pass (a lost etag race, a parent not in CS yet).
	errRetryLater = errors.New("retry later")
	// errMalformed marks a document the engine cannot act on until someone
	// fixes it; retrying it is pointless.
	errMalformed = errors.New("malformed document")
	// errResourceUnreadable marks (with errMalformed) a resource document
	// that does not parse: its operations are skipped until it is fixed.
	errResourceUnreadable = errors.New("resource document unreadable")
)

// retryLater is the error of a step that cannot finish now for a reason
// that will pass: the one way to say "deferred".
func retryLater(format string, args ...any) error {
	return fmt.Errorf("%w: %w", errRetryLater, fmt.Errorf(format, args...))
}

// busyLater is retryLater for a step CS's own objects put off (it or its
// cluster is busy, csrefusal.go): the operation is then backed off as a
// failed call is (pollAt), as upstream's rate-limited requeue does,
// rather than asked every tick while CS installs or upgrades for an hour.
func busyLater(format string, args ...any) error {
	return busyError{retryLater(format, args...)}
}

// errBusy marks busyLater's errors.
var errBusy = errors.New("clusters service is busy")

type busyError struct{ error }

func (b busyError) Unwrap() error      { return b.error }
func (busyError) Is(target error) bool { return target == errBusy }

// job is one operation being worked on, with its target resource as read
// from the store at the same time.
type job struct {
	op   *document.OperationDocument
	kind document.Kind // of the target resource (the cluster for credential ops)
	// res is the target resource; nil when its document is gone.
	res *document.Resource
	// h is the work of its (request, kind) pair.
	h *pair
	// reads answers the reads of its CS objects' state, from what its
	// tick's page listed where it can.
	reads csReads
	log   *slog.Logger
	logs  opLog // what log points at
	// gate is ownership's verdict, once owner has asked it (a tick's page
	// asks first, to know whether the poll reads CS).
	gate  gate
	gated bool
	// alive: a delete's poll read CS's object ready, neither uninstalling
	// nor gone (a DELETE that never reached CS; delete.go resends it).
	alive bool
}

// owner is ownership(j) for the job as it started, decided once: the
// page asks it to plan its lists and advance asks it first, both before
// the job writes anything (a write may replace j.res).
func (j *job) owner() gate {
	if !j.gated {
		j.gate, j.gated = ownership(j), true
	}
	return j.gate
}

// onCredentials reports whether a request works on a cluster's
// credentials rather than on the resource itself: those never own the
// resource's activeOperationId, and poll break-glass credentials, which
// are read per cluster, not in batches.
func onCredentials(r document.Request) bool {
	return r == document.RequestRequestCredential || r == document.RequestRevokeCredentials
}

// newJob is the one way a job is made: op with res, its target
// resource (nil when its document is gone), and the pair its request and
// kind name. A document we cannot act on (no pair for its request and
// target, a target outside its partition) is an error naming why.
func (e *Engine) newJob(op *document.OperationDocument, res *document.Resource) (*job, error) {
	kind, err := op.TargetKind()
	if err != nil {
		return nil, fmt.Errorf("operation %s: %w: %w", op.Name(), errMalformed, err)
	}
	h, ok := e.handlers[handlerKey{op.Properties.Request, kind}]
	if !ok {
		return nil, fmt.Errorf("operation %s: %w: no handler for request %s on a %s", op.Name(), errMalformed, op.Properties.Request, kind)
	}
	if !op.TargetInPartition() {
		pk := document.PartitionKey(document.SubscriptionOf(op.Properties.ExternalID))
		return nil, fmt.Errorf("operation %s: %w: externalId %q belongs in partition %s, not %s",
			op.Name(), errMalformed, op.Properties.ExternalID, pk, op.PartitionKey)
	}
	j := &job{op: op, kind: kind, res: res, h: h}
	j.log = j.logs.init(e.log.Handler(), op)
	return j, nil
}

// jobFor is op's job as a tick or a change-feed batch runs it: the one
// its tick's page made, else newJob's with the resource the page read or,
// unread, read now (after newJob, which refuses a document without
// reading). Its reads of CS answer from what the page listed.
func (e *Engine) jobFor(ctx context.Context, op *document.OperationDocument, page pageRead) (*job, error) {
	j := page.job
	if j == nil {
		var err error
		if j, err = e.newJob(op, page.res); err != nil {
			return nil, err
		}
		if err = page.resErr; !page.read {
			j.res, err = e.readResource(ctx, op.PartitionKey, op.Properties.ExternalID)
		}
		if err != nil {
			return nil, fmt.Errorf("operation %s: %w", op.Name(), err)
		}
	}
	j.reads = e.reads(j, page.cs)
	return j, nil
}

// reads are j's reads of CS, answered from page where it listed them.
func (e *Engine) reads(j *job, page *snapshot) csReads {
	r := csReads{cs: e.cs, page: page, calls: e.calls}
	if j.kind == document.KindCluster && j.res != nil {
		r.resourceID = j.res.ResourceID()
	}
	return r
}

// readOperation reads an operation document; nil when it is gone.
func (w *writer) readOperation(ctx context.Context, pk, id string) (*document.OperationDocument, error) {
	return readOperation(ctx, w.store, pk, id)
}

func readOperation(ctx context.Context, st store.Store, pk, id string) (*document.OperationDocument, error) {
	item, err := st.Get(ctx, pk, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading operation %s: %w", id, err)
	}
	op, err := document.ParseOperation(item.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing operation %s: %w: %w", id, errMalformed, err)
	}
	return op, nil
}

// readResource reads the resource with this ARM ID; nil when it is gone.
func (w *writer) readResource(ctx context.Context, pk, resourceID string) (*document.Resource, error) {
	return readResource(ctx, w.store, pk, resourceID)
}

func readResource(ctx context.Context, st store.Store, pk, resourceID string) (*document.Resource, error) {
	id := document.CosmosID(resourceID)
	item, err := st.Get(ctx, pk, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading resource %s: %w", resourceID, err)
	}
	res, err := document.ParseResource(item.Body)
	if err != nil {
		return nil, unreadableResource(resourceID, err)
	}
	return res, nil
}

func unreadableResource(resourceID string, err error) error {
	return fmt.Errorf("parsing resource %s: %w: %w: %w", resourceID, errMalformed, errResourceUnreadable, err)
}

// whole makes j.res the resource as a write replaces it. The view hands
// a tick a projection, which holds only what the tick's decisions read
// (and which MarshalReplace refuses): a job that writes its resource
// reads it whole first, once. j.res is nil after it when the resource is
// gone.
func (w *writer) whole(ctx context.Context, j *job) error {
	if j.res == nil || !j.res.Partial() {
		return nil
	}
	res, err := w.readResource(ctx, j.op.PartitionKey, j.res.ResourceID())
	if err != nil {
		return err
	}
	j.res = res
	return nil
}

// mutateResource applies change to a copy of j.res, whole, and replaces
// it with If-Match (see writeGuarded). change returns false when there is
// nothing to write; the result is then the document as read. A resource
// that is gone, or goes while we write, is (nil, false, nil).
func (e *Engine) mutateResource(ctx context.Context, j *job, change func(*document.Resource) (bool, error)) (*document.Resource, bool, error) {
	if err := e.whole(ctx, j); err != nil || j.res == nil {
		return nil, false, err
	}
	return writeGuarded(ctx, j.log, j.res, func(res *document.Resource) (*document.Resource, bool, error) {
		c := res.Clone()
		if write, err := change(c); err != nil || !write {
			return res, false, err
		}
		body, err := c.MarshalReplace()
		if err != nil {
			return nil, false, fmt.Errorf("rendering resource %s: %w", res.ResourceID(), err)
		}
		item, err := e.store.Replace(ctx, res.PartitionKey(), res.ID(), body, res.ETag)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil // deleted or expired meanwhile
		}
		if err != nil {
			return nil, false, fmt.Errorf("replacing resource %s: %w", res.ResourceID(), err)
		}
		out, err := document.ParseResource(item.Body)
		if err != nil {
			return nil, false, fmt.Errorf("parsing resource %s as written: %w", res.ResourceID(), err)
		}
		return out, true, nil
	}, isPreconditionFailed, func(ctx context.Context, res *document.Resource) (*document.Resource, bool, error) {
		fresh, err := e.readResource(ctx, res.PartitionKey(), res.ResourceID())
		return fresh, fresh != nil, err
	})
}

// mutateOperation is mutateResource for an operation document.
func (w *writer) mutateOperation(ctx context.Context, log *slog.Logger, op *document.OperationDocument, change func(*document.OperationDocument) (bool, error)) (*document.OperationDocument, bool, error) {
	return writeGuarded(ctx, log, op, func(op *document.OperationDocument) (*document.OperationDocument, bool, error) {
		c := op.Clone()
		if write, err := change(c); err != nil || !write {
			return op, false, err
		}
		body, err := c.MarshalReplace()
		if err != nil {
			return nil, false, fmt.Errorf("rendering operation %s: %w", op.Name(), err)
		}
		item, err := w.store.Replace(ctx, op.PartitionKey, op.ID, body, op.ETag)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil // deleted or expired meanwhile
		}
		if err != nil {
			return nil, false, fmt.Errorf("replacing operation %s: %w", op.Name(), err)
		}
		out, err := document.ParseOperation(item.Body)
		if err != nil {
			return nil, false, fmt.Errorf("parsing operation %s as written: %w", op.Name(), err)
		}
		return out, true, nil
	}, isPreconditionFailed, func(ctx context.Context, op *document.OperationDocument) (*document.OperationDocument, bool, error) {
		fresh, err := w.readOperation(ctx, op.PartitionKey, op.ID)
		return fresh, fresh != nil, err
	})
}

func isPreconditionFailed(err error) bool { return errors.Is(err, store.ErrPreconditionFailed) }
