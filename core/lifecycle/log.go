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
// so the attributes are handed to the handler only when a line is written
// (see deferredAttrs).
func (e *Engine) logFor(op *document.OperationDocument) *slog.Logger {
	return slog.New(&deferredAttrs{base: e.log.Handler(), attrs: []slog.Attr{
		slog.String("operation_id", op.Name()),
		slog.String("resource_id", op.Properties.ExternalID),
		slog.String("request", string(op.Properties.Request)),
	}})
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
func (e *Engine) transition(ctx context.Context, j *job, from arm.ProvisioningState, resourceUpdated bool) {
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
		slog.Float64("seconds_since_start", e.sinceStart(j.op)),
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
func (e *Engine) notification(ctx context.Context, j *job, uri, outcome string, attempt int, next time.Time, err error) {
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

func (e *Engine) sinceStart(op *document.OperationDocument) float64 {
	if op.Properties.StartTime.IsZero() {
		return 0
	}
	return e.clock().Sub(op.Properties.StartTime).Seconds()
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
