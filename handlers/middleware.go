package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/google/uuid"
)

// HeaderInvocationID is set by the host on every request it sends,
// including forwarded HTTP requests.
const HeaderInvocationID = "X-Azure-Functions-InvocationId"

// withInvocationID puts the host's invocation id (or a fresh one, for
// callers such as curl that send none) into the context and echoes it.
func (s *Server) withInvocationID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderInvocationID)
		if id == "" {
			id = uuid.NewString()
		}
		w.Header().Set(HeaderInvocationID, id)
		next.ServeHTTP(w, r.WithContext(WithInvocationID(r.Context(), id)))
	})
}

// accessLog writes one line per request. An invocation's line is its
// summary: the record the function named with Summarize (a tick, a
// dispatch batch), else "invocation", with the status, the duration and the
// error of a failed one, so each invocation costs exactly one line. Other
// requests (forwarded routes) get a "request" line; the host's readiness
// pings on GET / go to Debug so they do not drown the invocations.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		slot := &summarySlot{}
		next.ServeHTTP(ww, r.WithContext(context.WithValue(r.Context(), summarySlotKey{}, slot)))
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		level, msg, attrs := slot.line(r, status)
		attrs = append(attrs, slog.Int("status", status),
			slog.Float64("duration_ms", durationMS(time.Since(start))))
		if slot.err != "" {
			attrs = append(attrs, slog.String("error", slot.err))
		}
		s.logger.LogAttrs(r.Context(), level, msg, attrs...)
	})
}

// Message names of the lines accessLog writes when no function named one.
const (
	MsgInvocation = "invocation"
	MsgRequest    = "request"
)

// summarySlot lets the router and the function tell accessLog, which runs
// outside them, what a request was. Only the request's own goroutine
// writes it, and accessLog reads it after that goroutine returned.
type summarySlot struct {
	function   string
	invocation bool // POST /{function}, as opposed to a forwarded route
	msg        string
	level      slog.Level
	attrs      []slog.Attr
	err        string
}

type summarySlotKey struct{}

func slotFrom(ctx context.Context) *summarySlot {
	slot, _ := ctx.Value(summarySlotKey{}).(*summarySlot)
	return slot
}

func slotFunction(ctx context.Context) string {
	if slot := slotFrom(ctx); slot != nil {
		return slot.function
	}
	return ""
}

// line is the level, message and attributes of the request's one line.
func (slot *summarySlot) line(r *http.Request, status int) (slog.Level, string, []slog.Attr) {
	if !slot.invocation {
		level := slog.LevelInfo
		switch {
		case status >= 500:
			level = slog.LevelError
		case slot.err != "": // a refused caller
			level = slog.LevelWarn
		case r.URL.Path == "/" && status < 400:
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path)}
		if slot.function != "" {
			attrs = append(attrs, slog.String(LogAttrFunction, slot.function))
		}
		return level, MsgRequest, attrs
	}
	level, msg := slot.level, slot.msg
	if msg == "" {
		level, msg = slog.LevelInfo, MsgInvocation
	}
	switch {
	case status >= 500:
		level = max(level, slog.LevelError)
	case status >= 400:
		level = max(level, slog.LevelWarn)
	}
	if slot.err != "" {
		level = max(level, slog.LevelWarn)
	}
	return level, msg, append([]slog.Attr{slog.String(LogAttrFunction, slot.function)}, slot.attrs...)
}

// Summarize names the one line written for the current invocation and
// gives its attributes, for a function whose outcome is worth a telemetry
// record (a tick, a dispatch batch). The server adds the status, the
// duration and, when the invocation fails, the error, and raises the level
// to Warn (4xx) or Error (5xx). Outside a server (a function called
// directly) the line is written at once to logger instead.
func Summarize(ctx context.Context, logger *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	slot := slotFrom(ctx)
	if slot == nil || !slot.invocation {
		Logger(logger).LogAttrs(ctx, level, msg, attrs...)
		return
	}
	slot.level, slot.msg, slot.attrs = level, msg, attrs
}

// noteFunction records the function name for the access log and returns a
// context whose log lines carry it.
func noteFunction(ctx context.Context, name string, invocation bool) context.Context {
	if slot := slotFrom(ctx); slot != nil {
		slot.function, slot.invocation = name, invocation
	}
	info := requestInfoFrom(ctx)
	info.function = name
	return withRequestInfo(ctx, info)
}

// noteFailure hands a failed invocation's error to its summary line; it
// reports false when there is no line to carry it.
func noteFailure(ctx context.Context, err string) bool {
	slot := slotFrom(ctx)
	if slot == nil || !slot.invocation {
		return false
	}
	slot.err = err
	return true
}

func durationMS(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// recoverPanics turns a panic in a function into a 500 with the envelope
// shape, so one bad document cannot take the whole handler process down.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww, ok := w.(middleware.WrapResponseWriter)
		if !ok {
			ww = middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.LogAttrs(r.Context(), slog.LevelError, "panic while handling request",
				slog.String("path", r.URL.Path),
				slog.String(LogAttrFunction, slotFunction(r.Context())),
				slog.String("panic", fmt.Sprint(v)),
				slog.String("stack", string(debug.Stack())))
			if ww.Status() != 0 || ww.BytesWritten() > 0 {
				return // the response is already under way; nothing better to send
			}
			writeFailure(ww, http.StatusInternalServerError, fmt.Sprintf("internal error: panic: %v", v))
		}()
		next.ServeHTTP(ww, r)
	})
}

// limitBody caps request bodies; readBody turns the overflow into a 413.
// An invocation of a function with an OversizeFunc is left to invoke,
// which streams a body over the cap to it.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, "/"); ok && r.Method == http.MethodPost && s.oversizeFor(name) != nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			writeFailure(w, http.StatusRequestEntityTooLarge, tooLarge(r.ContentLength, s.cfg.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func tooLarge(got, limit int64) string {
	if got < 0 {
		return fmt.Sprintf("request body exceeds the limit of %d bytes", limit)
	}
	return fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", got, limit)
}

// ReadBody reads a request body under the server's limit; an overflow is a
// *BodyTooLargeError so forwarded-route handlers can answer 413 as well.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, &BodyTooLargeError{Limit: mbe.Limit}
	}
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return body, nil
}

// BodyTooLargeError reports a body over Config.MaxBodyBytes.
type BodyTooLargeError struct {
	Limit int64
}

func (e *BodyTooLargeError) Error() string { return tooLarge(-1, e.Limit) }
