// Package lifecycle moves ARO-HCP operations from Accepted to a terminal
// state: dispatch to Clusters Service, poll, atomic status writes, delete
// completion and ARM notification. It knows nothing of Azure Functions; the
// functions/ adapters call the entry points in this file.
package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/store"
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

// Engine is the lifecycle's entry point; build it with New. It is safe for
// concurrent use: a change-feed batch and a tick may run at the same time.
type Engine struct {
	store    store.Store
	cs       clusterservice.Client
	notifier Notifier
	clock    func() time.Time
	log      *slog.Logger
	random   io.Reader
	cfg      Config

	handlers map[handlerKey]*handler
	// locks serialise dispatch of one operation inside this process; across
	// processes the etag-guarded markers do the same job.
	locks *keyedLock
	// notifyAt schedules retries of failed ARM notifications.
	notifyAt *backoff
}

// DispatchDocuments handles one change-feed batch; non-operation documents
// are ignored. Safe to call again with the same batch. The error reports
// operations that failed and should be retried (the host redelivers the
// batch); malformed documents are logged and skipped, never retried.
func (e *Engine) DispatchDocuments(ctx context.Context, docs []json.RawMessage) (DispatchResult, error) {
	return e.dispatchDocuments(ctx, docs)
}

// Tick runs one poll pass over the active operations. Per-operation
// failures are counted in Errors and retried next tick; the error reports
// a tick that could not run or was cut short by ctx.
func (e *Engine) Tick(ctx context.Context) (TickResult, error) {
	return e.tick(ctx)
}

// Status renders the ARM operation-status body for a caller.
func (e *Engine) Status(ctx context.Context, req StatusRequest) (arm.OperationStatus, error) {
	return e.status(ctx, req)
}

// Result is ARM's Location poll of an operation: poll again, failed, or
// what the operation produced. Errors: ErrOperationNotFound,
// ErrOperationNotVisible, ErrResultGone, ErrResultUnsupported, or a
// failure to read.
func (e *Engine) Result(ctx context.Context, req StatusRequest) (Result, error) {
	return e.result(ctx, req)
}

// Admit applies the api-version and subscription-state gates ARO-HCP's
// frontend puts in front of every ARM request, and returns the home tenant
// for the visibility rules (the header, else the subscription's). A
// refused request is an error wrapping *admission.Rejection.
func (e *Engine) Admit(ctx context.Context, req AdmitRequest) (string, error) {
	return e.admit(ctx, req)
}
