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
// invocation that touched it.
func (e *Engine) logFor(ctx context.Context, op *document.OperationDocument) *slog.Logger {
	l := e.log.With(
		slog.String("operation_id", op.Name()),
		slog.String("resource_id", op.Properties.ExternalID),
		slog.String("request", string(op.Properties.Request)),
	)
	return withInvocation(ctx, l)
}

func withInvocation(ctx context.Context, l *slog.Logger) *slog.Logger {
	if id := InvocationID(ctx); id != "" {
		return l.With(slog.String(LogAttrInvocationID, id))
	}
	return l
}
