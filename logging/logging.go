// Package logging is how hcpops writes its log lines, the telemetry its
// users query in Application Insights: slog records, JSON by default, with
// Debug and Info on stdout and Warn and Error on stderr, and every record
// logged with an invocation's context carrying that invocation's id and
// function. The handler layer puts the id in the context once per request;
// the functions and the lifecycle below only pass the context on, so a
// transition, a dispatch or a notification line names the invocation that
// made it without the domain knowing what an invocation is.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// AttrInvocationID and AttrFunction are the attribute keys every line
// written during an invocation carries.
const (
	AttrInvocationID = "invocation_id"
	AttrFunction     = "function"
)

// EnvLevel sets the lowest level written: debug, info (default), warn or
// error.
const EnvLevel = "HCPOPS_LOG_LEVEL"

type invocationKey struct{}

// invocation is immutable once stored; a later stage stores a new copy, so
// goroutines a function starts never race on it.
type invocation struct {
	id       string
	function string
}

func invocationFrom(ctx context.Context) invocation {
	inv, _ := ctx.Value(invocationKey{}).(invocation)
	return inv
}

// WithInvocationID returns ctx carrying the invocation id its lines name:
// the handler sets it per request, the local trigger host and tests set
// it themselves.
func WithInvocationID(ctx context.Context, id string) context.Context {
	inv := invocationFrom(ctx)
	inv.id = id
	return context.WithValue(ctx, invocationKey{}, inv)
}

// WithFunction returns ctx whose lines name the function being invoked.
func WithFunction(ctx context.Context, name string) context.Context {
	inv := invocationFrom(ctx)
	inv.function = name
	return context.WithValue(ctx, invocationKey{}, inv)
}

// InvocationID is the invocation id ctx carries, or "".
func InvocationID(ctx context.Context) string {
	return invocationFrom(ctx).id
}

// Handler wraps h so that records logged with a context (InfoContext,
// LogAttrs...) carry the invocation id and function from that context.
// Wrapping twice is a no-op, and so is a second wrap with another
// handler between the two: a line never carries the id twice.
func Handler(h slog.Handler) slog.Handler {
	if _, ok := h.(*handler); ok {
		return h
	}
	return &handler{inner: h}
}

type handler struct {
	inner slog.Handler
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if inv := invocationFrom(ctx); inv.id != "" || inv.function != "" {
			// A handler of this kind further out (one wrapped around
			// another handler that wraps this one) has added them already.
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == AttrInvocationID {
					inv.id = ""
				}
				if a.Key == AttrFunction {
					inv.function = ""
				}
				return true
			})
			if inv.id != "" || inv.function != "" {
				r = r.Clone()
			}
			if inv.id != "" {
				r.AddAttrs(slog.String(AttrInvocationID, inv.id))
			}
			if inv.function != "" {
				r.AddAttrs(slog.String(AttrFunction, inv.function))
			}
		}
	}
	return h.inner.Handle(ctx, r)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(attrs)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name)}
}

// Logger returns logger with its handler wrapped by Handler; a nil logger
// yields one that discards everything.
func Logger(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	if _, ok := logger.Handler().(*handler); ok {
		return logger
	}
	return slog.New(Handler(logger.Handler()))
}

// New is the process logger: format json (the default) or text, Debug and
// Info on stdout, Warn and Error on stderr.
func New(format string, level slog.Leveler) *slog.Logger {
	return slog.New(Streams(os.Stdout, os.Stderr, format, level))
}

// Streams writes Debug and Info records to stdout and Warn and Error to
// stderr, in JSON (or text, for people). The Functions host logs every
// stderr line of a custom handler that lacks the word "warn" at Error
// level and every stdout line at Information, so this split is what keeps
// an INFO line from becoming an Error trace in Application Insights.
// The result is wrapped by Handler.
func Streams(stdout, stderr io.Writer, format string, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	build := func(w io.Writer) slog.Handler {
		if format == "text" {
			return slog.NewTextHandler(w, opts)
		}
		return slog.NewJSONHandler(w, opts)
	}
	return Handler(&streams{low: build(stdout), high: build(stderr)})
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
	return 0, fmt.Errorf("%s=%q: want debug, info, warn or error", EnvLevel, s)
}

// Millis is d in milliseconds with microsecond precision, the unit of
// every *_ms attribute.
func Millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}
