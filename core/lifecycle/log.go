package lifecycle

import (
	"context"
	"log/slog"

	"github.com/hcpops/hcpops/core/document"
)

// The lifecycle keeps no invocation id of its own: the caller's context
// carries it, and the process's slog handler (handlers.LogHandler) reads it
// from the context of each record. So every line here is handed to the
// handler with the context of the work it is about.

// logFor returns the engine logger with what identifies op, bound to ctx:
// every line about an operation can then be found by its UUID, its
// resource or the invocation that touched it. Every poll makes one, and
// most write nothing, so the attributes are handed to the handler only when
// a line is written (see deferredAttrs).
func (e *Engine) logFor(ctx context.Context, op *document.OperationDocument) *slog.Logger {
	return slog.New(&deferredAttrs{ctx: ctx, base: e.log.Handler(), attrs: []slog.Attr{
		slog.String("operation_id", op.Name()),
		slog.String("resource_id", op.Properties.ExternalID),
		slog.String("request", string(op.Properties.Request)),
	}})
}

// logCtx is the engine logger bound to ctx, for lines about no one operation.
func (e *Engine) logCtx(ctx context.Context) *slog.Logger {
	return slog.New(&deferredAttrs{ctx: ctx, base: e.log.Handler()})
}

// deferredAttrs holds attributes for base until a record is handled, and
// hands the record over with the context the logger was bound to when the
// call itself gave none (Info rather than InfoContext).
// slog's built-in handlers format WithAttrs at once, which cost a poll more
// than the rest of its logging; the lines written are the same.
type deferredAttrs struct {
	ctx   context.Context
	base  slog.Handler
	attrs []slog.Attr
}

func (h *deferredAttrs) context(ctx context.Context) context.Context {
	if (ctx == nil || ctx == context.Background()) && h.ctx != nil {
		return h.ctx
	}
	return ctx
}

func (h *deferredAttrs) Enabled(ctx context.Context, l slog.Level) bool {
	return h.base.Enabled(h.context(ctx), l)
}

func (h *deferredAttrs) Handle(ctx context.Context, r slog.Record) error {
	base := h.base
	if len(h.attrs) > 0 {
		base = base.WithAttrs(h.attrs)
	}
	return base.Handle(h.context(ctx), r)
}

func (h *deferredAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &deferredAttrs{ctx: h.ctx, base: h.base, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

func (h *deferredAttrs) WithGroup(name string) slog.Handler {
	base := h.base
	if len(h.attrs) > 0 {
		base = base.WithAttrs(h.attrs)
	}
	return &deferredAttrs{ctx: h.ctx, base: base.WithGroup(name)}
}
