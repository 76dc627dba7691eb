package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// LogAttrInvocationID and LogAttrFunction are the attribute keys every log
// line written during an invocation carries.
const (
	LogAttrInvocationID = "invocation_id"
	LogAttrFunction     = "function"
)

// EnvLogLevel sets the lowest level written: debug, info (default), warn
// or error.
const EnvLogLevel = "HCPOPS_LOG_LEVEL"

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

// WithInvocationID returns a context carrying an invocation id. It is the
// one place the id lives: the server sets it per request, the local trigger
// host and tests set it themselves, and LogHandler reads it. Code below the
// handler layer only passes ctx along (or logs through a logger bound to it).
func WithInvocationID(ctx context.Context, id string) context.Context {
	info := requestInfoFrom(ctx)
	info.invocationID = id
	return withRequestInfo(ctx, info)
}

// LogHandler wraps h so that records logged with a context (InfoContext,
// LogAttrs...) carry the invocation id and function name from that context.
// Wrapping twice is a no-op, so a line never carries the id twice.
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

// ParseLevel reads a level name as HCPOPS_LOG_LEVEL spells it; "" is info.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%s=%q: want debug, info, warn or error", EnvLogLevel, s)
}

// StreamHandler writes Debug and Info records to stdout and Warn and Error
// to stderr, in JSON (or text, for people). The Functions host logs every
// stderr line of a custom handler that lacks the word "warn" at Error
// level and every stdout line at Information, so this split is what keeps
// an INFO line from becoming an Error trace in Application Insights.
// The result is wrapped by LogHandler.
func StreamHandler(stdout, stderr io.Writer, format string, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	build := func(w io.Writer) slog.Handler {
		if format == "text" {
			return slog.NewTextHandler(w, opts)
		}
		return slog.NewJSONHandler(w, opts)
	}
	return LogHandler(&streams{low: build(stdout), high: build(stderr)})
}

// streams routes a record by level; both sides share attributes and groups.
type streams struct {
	low, high slog.Handler
}

func (s *streams) pick(l slog.Level) slog.Handler {
	if l >= slog.LevelWarn {
		return s.high
	}
	return s.low
}

func (s *streams) Enabled(ctx context.Context, l slog.Level) bool {
	return s.pick(l).Enabled(ctx, l)
}

func (s *streams) Handle(ctx context.Context, r slog.Record) error {
	return s.pick(r.Level).Handle(ctx, r)
}

func (s *streams) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &streams{low: s.low.WithAttrs(attrs), high: s.high.WithAttrs(attrs)}
}

func (s *streams) WithGroup(name string) slog.Handler {
	return &streams{low: s.low.WithGroup(name), high: s.high.WithGroup(name)}
}
