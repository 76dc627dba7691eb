package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// An operator's way out of an operation hcpops cannot finish (Clusters
// Service lost the object, a resource document a human must repair): the
// status write, resource update and ARM notification of any terminal
// state, through updateOperationStatus, with who and why on the record.

// MsgAbandoned: an operator ended an active operation by hand.
const MsgAbandoned = "operation.abandoned"

// CodeOperationAbandoned is the error code of an abandoned operation.
const CodeOperationAbandoned = "OperationAbandoned"

// ErrNotAbandonable: the operation is unknown or already terminal;
// nothing was written.
var ErrNotAbandonable = errors.New("operation cannot be abandoned")

// AbandonRequest names an active operation and how it ends.
type AbandonRequest struct {
	PartitionKey, ID string // the operation document
	// Status is Failed or Canceled.
	Status arm.ProvisioningState
	// Reason and By (the operator) go into the error message and the
	// MsgAbandoned record; both are required.
	Reason, By string
}

// Abandoned is what an abandon wrote.
type Abandoned struct {
	// Operation is the operation document as written.
	Operation *document.OperationDocument
	From      arm.ProvisioningState
	// ResourceUpdated: the resource's provisioningState was written too.
	ResourceUpdated bool
	// NotificationPending: ARM is still to be told (the URI is still set);
	// the tick of the process that serves the store retries it.
	NotificationPending bool
}

func (r AbandonRequest) check() error {
	switch {
	case r.Status != arm.ProvisioningStateFailed && r.Status != arm.ProvisioningStateCanceled:
		return fmt.Errorf("abandon: status %q: want %s or %s", r.Status, arm.ProvisioningStateFailed, arm.ProvisioningStateCanceled)
	case strings.TrimSpace(r.Reason) == "":
		return errors.New("abandon: the reason is empty: say why the operation is ended by hand")
	case strings.TrimSpace(r.By) == "":
		return errors.New("abandon: the operator is empty: say who ends the operation")
	}
	return store.CheckAddress(r.PartitionKey, r.ID)
}

// abandon writes Failed or Canceled (code OperationAbandoned, message
// naming the operator and the reason) on an active operation and the
// resource's provisioningState as the lifecycle would, ETag-guarded, then
// notifies ARM and logs MsgAbandoned. An unknown or terminal operation is
// ErrNotAbandonable and nothing is written.
func (w *writer) abandon(ctx context.Context, req AbandonRequest) (Abandoned, error) {
	if err := req.check(); err != nil {
		return Abandoned{}, err
	}
	op, err := w.readOperation(ctx, req.PartitionKey, req.ID)
	if err != nil {
		return Abandoned{}, err
	}
	if op == nil {
		return Abandoned{}, fmt.Errorf("%w: no operation %s in partition %s (expired after 7 days, or never written); nothing was written",
			ErrNotAbandonable, req.ID, req.PartitionKey)
	}
	from := op.Properties.Status
	if from.IsTerminal() {
		return Abandoned{}, fmt.Errorf("%w: operation %s is already %s; nothing was written", ErrNotAbandonable, op.Name(), from)
	}
	kind, err := op.TargetKind()
	if err != nil {
		return Abandoned{}, fmt.Errorf("operation %s: %w: %w", op.Name(), errMalformed, err)
	}
	j := &job{op: op, kind: kind, log: w.logFor(op)}
	if ext := op.Properties.ExternalID; ext != "" {
		if j.res, err = w.readResource(ctx, op.PartitionKey, ext); err != nil {
			return Abandoned{}, err
		}
	}
	cerr := &arm.CloudErrorBody{Code: CodeOperationAbandoned,
		Message: fmt.Sprintf("Abandoned by %s: %s", strings.TrimSpace(req.By), strings.TrimSpace(req.Reason))}
	wctx, cancel := w.writeCtx(ctx)
	defer cancel()
	owned := j.res != nil && strings.EqualFold(j.res.ActiveOperationID(), op.Name())
	wrote, err := w.writeStatus(wctx, j, req.Status, cerr)
	if err != nil {
		return Abandoned{}, fmt.Errorf("abandoning operation %s: %w", op.Name(), err)
	}
	if !wrote.status {
		return Abandoned{}, fmt.Errorf("%w: operation %s became %s meanwhile; nothing was written", ErrNotAbandonable, op.Name(), j.op.Properties.Status)
	}
	out := Abandoned{Operation: j.op, From: from, NotificationPending: j.op.Properties.NotificationURI != ""}
	out.ResourceUpdated = owned && j.res != nil && j.res.ProvisioningState() == req.Status
	j.log.LogAttrs(ctx, slog.LevelWarn, MsgAbandoned,
		slog.String("kind", j.kind.String()),
		slog.String("from", string(from)),
		slog.String("to", string(req.Status)),
		slog.String("error_code", CodeOperationAbandoned),
		slog.String("reason", strings.TrimSpace(req.Reason)),
		slog.String("by", strings.TrimSpace(req.By)),
		slog.Bool("resource_updated", out.ResourceUpdated),
		slog.Bool("notification_pending", out.NotificationPending),
		slog.Float64("seconds_since_start", w.sinceStart(j.op)),
		slog.String("cluster_service_id", csID(j)))
	return out, nil
}

// AbandonDeps are what an abandon needs: no Clusters Service, since it is
// what an operator works around.
type AbandonDeps struct {
	Store    store.Store
	Notifier Notifier
	Clock    clock.Clock
	Logger   *slog.Logger
}

// Abandon is an operator's abandon of req, from a process (the CLI) that
// serves no ticks and talks to no Clusters Service. It is a function, not
// a method of the serving Engine: only the CLI calls it, so the Function
// App's binary does not carry it (cmd/hcpops's deps test holds that).
func Abandon(ctx context.Context, deps AbandonDeps, cfg Config, req AbandonRequest) (Abandoned, error) {
	if deps.Store == nil || deps.Notifier == nil || deps.Clock == nil {
		return Abandoned{}, errors.New("lifecycle abandon deps: Store, Notifier and Clock required")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Abandoned{}, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	w := newWriter(deps.Store, deps.Notifier, deps.Clock, deps.Logger, cfg)
	return w.abandon(ctx, req)
}
