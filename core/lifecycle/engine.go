// Package lifecycle moves ARO-HCP operations from Accepted to a terminal
// state: dispatch to Clusters Service, poll, atomic status writes, delete
// completion and ARM notification. It knows nothing of Azure Functions; the
// functions/ adapters call the entry points in this file.
package lifecycle

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hcpops/hcpops/core/arm"
)

// DispatchResult counts what one change-feed batch did.
type DispatchResult struct {
	Documents  int // documents in the batch
	Operations int // of which were operation documents
	Dispatched int // CS calls made (or adopted) and recorded
	Skipped    int // terminal, already dispatched, or not ours
	Deferred   int // cannot proceed yet (e.g. parent not in CS); the tick retries
}

// TickResult counts what one poll tick did.
type TickResult struct {
	Polled     int // operations examined
	Changed    int // operations whose document was written
	Dispatched int // missed dispatches picked up
	Expired    int // failed for passing their deadline
	Canceled   int // superseded by another operation
	Notified   int // ARM notifications delivered
	Errors     int // operations that failed this tick and will be retried
}

// StatusRequest identifies an operation-status read and its caller.
type StatusRequest struct {
	SubscriptionID string
	Location       string
	OperationName  string // the operation UUID
	HomeTenantID   string // X-Ms-Home-Tenant-Id
	ClientObjectID string // X-Ms-Client-Object-Id
}

var (
	// ErrOperationNotFound: no such operation document, or it expired.
	ErrOperationNotFound = errors.New("operation not found")
	// ErrOperationNotVisible: the document exists but ARM's visibility rules
	// hide it from this caller (rendered as a 404 with an empty body).
	ErrOperationNotVisible = errors.New("operation not visible to caller")
)

// Engine is the lifecycle's entry point; build it with New.
type Engine struct{}

var errNotImplemented = errors.New("lifecycle: not implemented yet")

// DispatchDocuments handles one change-feed batch; non-operation documents
// are ignored. Safe to call again with the same batch.
func (e *Engine) DispatchDocuments(ctx context.Context, docs []json.RawMessage) (DispatchResult, error) {
	return DispatchResult{}, errNotImplemented
}

// Tick runs one poll pass over the active operations.
func (e *Engine) Tick(ctx context.Context) (TickResult, error) {
	return TickResult{}, errNotImplemented
}

// Status renders the ARM operation-status body for a caller.
func (e *Engine) Status(ctx context.Context, req StatusRequest) (arm.OperationStatus, error) {
	return arm.OperationStatus{}, errNotImplemented
}
