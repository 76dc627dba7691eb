package handlers

import (
	"context"
	"log/slog"
)

// LogAttrInvocationID and LogAttrFunction are the attribute keys every log
// line written during an invocation carries.
const (
	LogAttrInvocationID = "invocation_id"
	LogAttrFunction     = "function"
)

type requestInfoKey struct{}

// requestInfo is immutable once stored; a later stage stores a new copy
// rather than mutating, so goroutines spawned by a function never race.
type requestInfo struct {
	invocationID string
	function     string
}

func withRequestInfo(ctx context.Context, info requestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

func requestInfoFrom(ctx context.Context) requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(requestInfo)
	return info
}

// InvocationID returns the Functions invocation id carried by ctx, or "".
func InvocationID(ctx context.Context) string {
	return requestInfoFrom(ctx).invocationID
}

// FunctionName returns the name of the function being invoked, or "".
func FunctionName(ctx context.Context) string {
	return requestInfoFrom(ctx).function
}

// WithInvocationID returns a context carrying an invocation id, for callers
// outside the server (a local trigger host, tests) that want the same log
// correlation.
func WithInvocationID(ctx context.Context, id string) context.Context {
	info := requestInfoFrom(ctx)
	info.invocationID = id
	return withRequestInfo(ctx, info)
}

// LogHandler wraps h so that records logged with a context (InfoContext,
// LogAttrs...) carry the invocation id and function name from that context.
// Code deep in core only has to pass ctx along to be correlated with the
// host's invocation. Wrapping twice is a no-op.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(*logHandler); ok {
		return h
	}
	return &logHandler{inner: h}
}

type logHandler struct {
	inner slog.Handler
}

func (h *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		info := requestInfoFrom(ctx)
		if info.invocationID != "" || info.function != "" {
			r = r.Clone()
			if info.invocationID != "" {
				r.AddAttrs(slog.String(LogAttrInvocationID, info.invocationID))
			}
			if info.function != "" {
				r.AddAttrs(slog.String(LogAttrFunction, info.function))
			}
		}
	}
	return h.inner.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{inner: h.inner.WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{inner: h.inner.WithGroup(name)}
}

// Logger returns logger with its handler wrapped by LogHandler; a nil logger
// yields one that discards everything.
func Logger(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	if _, ok := logger.Handler().(*logHandler); ok {
		return logger
	}
	return slog.New(LogHandler(logger.Handler()))
}
