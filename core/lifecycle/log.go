package lifecycle

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// The lifecycle keeps no invocation id of its own: the caller's context
// carries it, and the process's slog handler (logging.Handler) reads it
// from the context of each record. So every line here is written with the
// context of the work it is about (InfoContext, LogAttrs).

// logFor returns the engine logger with what identifies op: every line
// about an operation can then be found by its UUID, its resource or the
// invocation that touched it. Every poll makes one, and most write nothing,
// so the attributes are read off op only when a line is written (opAttrs).
func (w *writer) logFor(op *document.OperationDocument) *slog.Logger {
	return new(opLog).init(w.log.Handler(), op)
}

// opLog is an operation's logger and its handler in one allocation, or in
// none inside its job (newJob): three per poll showed in an unchanged
// tick's CPU, for lines it almost never writes (see
// docs/decisions/active-set-view.md#an-operations-logger).
type opLog struct {
	h opAttrs
	l slog.Logger
}

func (o *opLog) init(base slog.Handler, op *document.OperationDocument) *slog.Logger {
	o.h = opAttrs{base: base, op: op}
	o.l = *slog.New(&o.h)
	return &o.l
}

// opAttrs is deferredAttrs for the attributes that identify op, built
// when a record is handled. Operation documents are never changed in
// place (a write makes a new one), so they are what they were at logFor.
type opAttrs struct {
	base slog.Handler
	op   *document.OperationDocument
}

func (h *opAttrs) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("operation_id", h.op.Name()),
		slog.String("resource_id", h.op.Properties.ExternalID),
		slog.String("request", string(h.op.Properties.Request)),
	}
}

func (h *opAttrs) Enabled(ctx context.Context, l slog.Level) bool {
	return h.base.Enabled(ctx, l)
}

func (h *opAttrs) Handle(ctx context.Context, r slog.Record) error {
	return h.base.WithAttrs(h.attrs()).Handle(ctx, r)
}

func (h *opAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &deferredAttrs{base: h.base, attrs: append(h.attrs(), attrs...)}
}

func (h *opAttrs) WithGroup(name string) slog.Handler {
	return (&deferredAttrs{base: h.base, attrs: h.attrs()}).WithGroup(name)
}

// deferredAttrs holds attributes for base until a record is handled.
// slog's built-in handlers format WithAttrs at once, which cost a poll more
// than the rest of its logging; the lines written are the same.
type deferredAttrs struct {
	base  slog.Handler
	attrs []slog.Attr
}

func (h *deferredAttrs) Enabled(ctx context.Context, l slog.Level) bool {
	return h.base.Enabled(ctx, l)
}

func (h *deferredAttrs) Handle(ctx context.Context, r slog.Record) error {
	base := h.base
	if len(h.attrs) > 0 {
		base = base.WithAttrs(h.attrs)
	}
	return base.Handle(ctx, r)
}

func (h *deferredAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &deferredAttrs{base: h.base, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

func (h *deferredAttrs) WithGroup(name string) slog.Handler {
	base := h.base
	if len(h.attrs) > 0 {
		base = base.WithAttrs(h.attrs)
	}
	return &deferredAttrs{base: base.WithGroup(name)}
}

// Telemetry message names written by the lifecycle; with their attribute
// keys they are documented in docs/functions.md and held by a golden test,
// because dashboards and alerts query them by name.
const (
	// MsgTransition: an operation's status was written (from, to).
	MsgTransition = "operation.transition"
	// MsgDispatched: a dispatcher made (or adopted) its CS call.
	MsgDispatched = "operation.dispatched"
	// MsgNotification: one attempt to POST a terminal status to ARM.
	MsgNotification = "notification.attempt"
)

// Notification outcomes, in the record's "outcome".
const (
	NotificationDelivered = "delivered"
	NotificationFailed    = "failed"
	NotificationRefused   = "refused" // the notifier will never send to this URI
)

// transition logs MsgTransition for j.op, which now has status to.
func (w *writer) transition(ctx context.Context, j *job, from arm.ProvisioningState, resourceUpdated bool) {
	p := &j.op.Properties
	code, message := "", ""
	if p.Error != nil {
		code, message = p.Error.Code, p.Error.Message
	}
	j.log.LogAttrs(ctx, slog.LevelInfo, MsgTransition,
		slog.String("kind", j.kind.String()),
		slog.String("from", string(from)),
		slog.String("to", string(p.Status)),
		slog.String("error_code", code),
		slog.String("error_message", message),
		slog.Float64("seconds_since_start", w.sinceStart(j.op)),
		slog.String("cluster_service_id", csID(j)),
		slog.Bool("resource_updated", resourceUpdated))
}

// dispatched logs MsgDispatched for j.op.
// The function in the line (dispatchOperations or pollOperations) says
// whether the change feed or the tick's safety net made it.
func (e *Engine) dispatched(ctx context.Context, j *job) {
	j.log.LogAttrs(ctx, slog.LevelInfo, MsgDispatched,
		slog.String("kind", j.kind.String()),
		slog.String("status", string(j.op.Properties.Status)),
		slog.Float64("seconds_since_start", e.sinceStart(j.op)),
		slog.String("cluster_service_id", csID(j)))
}

// notification logs MsgNotification. Only the URI's host is logged: the
// rest of a notification URI may carry a token.
func (w *writer) notification(ctx context.Context, j *job, uri, outcome string, attempt int, next time.Time, err error) {
	host := "(unparseable)"
	if u, perr := url.Parse(uri); perr == nil {
		host = u.Host
	}
	level, nextRetry, msg := slog.LevelInfo, "", ""
	if outcome != NotificationDelivered {
		level = slog.LevelWarn
	}
	if !next.IsZero() {
		nextRetry = next.UTC().Format(time.RFC3339)
	}
	if err != nil {
		msg = err.Error()
	}
	j.log.LogAttrs(ctx, level, MsgNotification,
		slog.String("host", host),
		slog.String("outcome", outcome),
		slog.Int("attempt", attempt),
		slog.String("next_retry", nextRetry),
		slog.String("status", string(j.op.Properties.Status)),
		slog.String("error", msg))
}

func (w *writer) sinceStart(op *document.OperationDocument) float64 {
	if op.Properties.StartTime.IsZero() {
		return 0
	}
	return w.clock().Sub(op.Properties.StartTime).Seconds()
}

// csID is the CS object the operation works on: the operation's own
// internalId, else the resource's.
func csID(j *job) string {
	if id := j.op.Properties.InternalID; id != "" {
		return id
	}
	if j.res != nil {
		return j.res.ClusterServiceID()
	}
	return ""
}
