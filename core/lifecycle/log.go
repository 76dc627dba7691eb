package lifecycle

import (
	"context"
	"log/slog"

	"github.com/hcpops/hcpops/core/document"
)

// LogAttrInvocationID is the attribute key of the Functions invocation id,
// the same key the handler layer uses, so lines from both correlate.
const LogAttrInvocationID = "invocation_id"

type invocationKey struct{}

// WithInvocationID returns a context carrying the Functions invocation id;
// the handler layer calls it so that lifecycle log lines name the
// invocation that caused them.
func WithInvocationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, invocationKey{}, id)
}

// InvocationID returns the invocation id carried by ctx, or "".
func InvocationID(ctx context.Context) string {
	id, _ := ctx.Value(invocationKey{}).(string)
	return id
}

// logFor returns the engine logger with what identifies op: every line
// about an operation can then be found by its UUID, its resource or the
// invocation that touched it. Every poll makes one, and most write
// nothing, so the attributes are handed to the handler only when a line is
// written (see deferredAttrs).
func (e *Engine) logFor(ctx context.Context, op *document.OperationDocument) *slog.Logger {
	l := slog.New(&deferredAttrs{base: e.log.Handler(), attrs: []slog.Attr{
		slog.String("operation_id", op.Name()),
		slog.String("resource_id", op.Properties.ExternalID),
		slog.String("request", string(op.Properties.Request)),
	}})
	return withInvocation(ctx, l)
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
	return h.base.WithAttrs(h.attrs).Handle(ctx, r)
}

func (h *deferredAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &deferredAttrs{base: h.base, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

func (h *deferredAttrs) WithGroup(name string) slog.Handler {
	return h.base.WithAttrs(h.attrs).WithGroup(name)
}

func withInvocation(ctx context.Context, l *slog.Logger) *slog.Logger {
	if id := InvocationID(ctx); id != "" {
		return l.With(slog.String(LogAttrInvocationID, id))
	}
	return l
}
