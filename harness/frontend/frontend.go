// Package frontend writes operations the way ARO-HCP's frontend does when it
// accepts a PUT, DELETE or credential POST: the operation document and the
// resource change in one transactional batch on the subscription partition.
// It is not the frontend (there is no ARM request handling here); it is what
// `hcpopsctl submit`, the local host and the tests use to produce exactly the
// documents the backend meets in a real RP database.
package frontend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Default deadlines, as ARO-HCP's admission sets them.
const (
	DefaultCreateDeadline = 60 * time.Minute
	DefaultDeleteDeadline = 12 * time.Hour
)

// ErrNotFound: the target (or its parent) does not exist; ARM would answer
// 404, or 204 for a delete.
var ErrNotFound = errors.New("resource not found")

// ConflictError is ARM's 409: the request clashes with an operation in flight.
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return "conflict: " + e.Message }

// IsConflict reports whether err is a *ConflictError.
func IsConflict(err error) bool {
	var c *ConflictError
	return errors.As(err, &c)
}

// Options are what the ARM request carried.
type Options struct {
	Location             string // ARM location used in the operation ID; default: the resource's, else "eastus"
	TenantID             string // X-Ms-Home-Tenant-Id
	ClientID             string // X-Ms-Client-Object-Id
	NotificationURI      string // Azure-AsyncNotificationUri
	ClientRequestID      string
	CorrelationRequestID string
	// CreateDeadline is how long after its start a create must finish
	// (createOperationCompletionDeadline); 0 means DefaultCreateDeadline.
	// Soak runs shorten it for resources they expect to fail.
	CreateDeadline time.Duration
}

// Accepted is the frontend's answer: the operation it wrote.
type Accepted struct {
	Operation *document.OperationDocument
}

// StatusPath is the Azure-AsyncOperation path ARM polls.
func (a Accepted) StatusPath() string { return a.Operation.Properties.OperationID }

// Frontend writes operations into a store.
type Frontend struct {
	store   store.Store
	now     func() time.Time
	newUUID func() string
}

// New builds a Frontend; the clock and newUUID are injected so tests are
// exact. A nil clock is the wall clock.
func New(s store.Store, c clock.Clock, newUUID func() string) *Frontend {
	return &Frontend{store: s, now: clock.OrReal(c).Now, newUUID: newUUID}
}

// target is a parsed request target.
type target struct {
	id           string
	kind         document.Kind
	subscription string
	pk           string
	cosmosID     string
}

func parseTarget(resourceID string, want ...document.Kind) (target, error) {
	kind, rid, err := document.ResourceKindOfID("resourceID", resourceID)
	if err != nil {
		return target{}, err
	}
	ok := len(want) == 0
	for _, k := range want {
		ok = ok || k == kind
	}
	if !ok {
		return target{}, fmt.Errorf("resourceID %q: a %s cannot take this request", resourceID, kind)
	}
	return target{
		id:           resourceID,
		kind:         kind,
		subscription: rid.SubscriptionID,
		pk:           document.PartitionKey(rid.SubscriptionID),
		cosmosID:     document.CosmosID(resourceID),
	}, nil
}

// read returns the live resource, or nil when there is none.
func (f *Frontend) read(ctx context.Context, t target) (*document.Resource, error) {
	item, err := f.store.Get(ctx, t.pk, t.cosmosID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.id, err)
	}
	r, err := document.ParseResource(item.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.id, err)
	}
	return r, nil
}

func (f *Frontend) newOperation(req document.Request, externalID, internalID string, opts Options, implicit bool) (*document.OperationDocument, error) {
	p := document.NewOperationParams{
		Request: req, ExternalID: externalID, InternalID: internalID,
		Location: opts.Location, Name: f.newUUID(), Now: f.now(),
	}
	if p.Location == "" {
		p.Location = "eastus"
	}
	if !implicit {
		p.TenantID, p.ClientID, p.NotificationURI = opts.TenantID, opts.ClientID, opts.NotificationURI
		p.ClientRequestID, p.CorrelationRequestID = opts.ClientRequestID, opts.CorrelationRequestID
	}
	op, err := document.NewOperation(p)
	if err != nil {
		return nil, fmt.Errorf("building %s operation for %s: %w", req, externalID, err)
	}
	return op, nil
}

func createOp(op *document.OperationDocument) (store.BatchOp, error) {
	body, err := op.MarshalCreate()
	if err != nil {
		return store.BatchOp{}, fmt.Errorf("encoding operation %s: %w", op.Name(), err)
	}
	return store.BatchOp{Kind: store.OpCreate, Body: body}, nil
}

func replaceResource(r *document.Resource) (store.BatchOp, error) {
	body, err := r.MarshalReplace()
	if err != nil {
		return store.BatchOp{}, fmt.Errorf("encoding %s: %w", r.ResourceID(), err)
	}
	return store.BatchOp{Kind: store.OpReplace, ID: document.CosmosID(r.ResourceID()), Body: body, IfMatch: r.ETag}, nil
}

// commit runs the batch; a lost etag race is a conflict, as the frontend
// turns a 412 into a retryable error.
func (f *Frontend) commit(ctx context.Context, pk string, ops []store.BatchOp) error {
	if _, err := f.store.Batch(ctx, pk, ops); err != nil {
		if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrConflict) {
			return &ConflictError{Message: fmt.Sprintf("the resource changed while the request was accepted (%v); retry", err)}
		}
		return fmt.Errorf("writing batch: %w", err)
	}
	return nil
}

// checkParent enforces "no child request while the cluster is Provisioning
// or Deleting" and returns the parent.
func (f *Frontend) checkParent(ctx context.Context, t target) (*document.Resource, error) {
	parentID, err := document.ParentClusterID(t.id)
	if err != nil {
		return nil, err
	}
	pt, err := parseTarget(parentID, document.KindCluster)
	if err != nil {
		return nil, err
	}
	parent, err := f.read(ctx, pt)
	if err != nil {
		return nil, err
	}
	if parent == nil {
		return nil, fmt.Errorf("parent cluster %s: %w", parentID, ErrNotFound)
	}
	switch s := parent.ProvisioningState(); s {
	case arm.ProvisioningStateProvisioning, arm.ProvisioningStateDeleting:
		return nil, &ConflictError{Message: fmt.Sprintf("parent cluster %s is %s", parentID, s)}
	}
	return parent, nil
}

// cancelActive builds replace steps that cancel the active operations on
// externalID (and, when nested, on its children) — the frontend's
// CancelActiveOperations. only, when set, limits them to one request type.
func (f *Frontend) cancelActive(ctx context.Context, pk, externalID string, nested bool, only document.Request) ([]store.BatchOp, error) {
	var ops []store.BatchOp
	prefix := strings.ToLower(externalID) + "/"
	err := f.store.ActiveOperations(ctx, store.ActiveOperationsQuery{}, func(items []store.Item) error {
		for _, it := range items {
			op, err := document.ParseOperation(it.Body)
			if err != nil || op.PartitionKey != pk || op.Properties.Status.IsTerminal() {
				continue
			}
			ext := strings.ToLower(op.Properties.ExternalID)
			if ext != strings.ToLower(externalID) && (!nested || !strings.HasPrefix(ext, prefix)) {
				continue
			}
			if only != "" && op.Properties.Request != only {
				continue
			}
			op.Properties.SetStatus(f.now(), arm.ProvisioningStateCanceled, &arm.CloudErrorBody{Code: arm.CodeCanceled, Message: "This operation was superseded by another"})
			body, err := op.MarshalReplace()
			if err != nil {
				return fmt.Errorf("encoding canceled operation %s: %w", op.Name(), err)
			}
			ops = append(ops, store.BatchOp{Kind: store.OpReplace, ID: op.ID, Body: body, IfMatch: op.ETag})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing active operations on %s: %w", externalID, err)
	}
	return ops, nil
}
