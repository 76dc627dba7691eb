package handlers

import (
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

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/logging"
)

// withInvocationID gives the request's context the host's invocation id
// (or a fresh one, for callers such as curl that send none), so every line
// logged for it names the invocation, and echoes it. It is the one value
// the server puts in a context.
func (s *Server) withInvocationID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(events.HeaderInvocationID)
		if id == "" {
			id = uuid.NewString()
		}
		w.Header().Set(events.HeaderInvocationID, id)
		next.ServeHTTP(w, r.WithContext(logging.WithInvocationID(r.Context(), id)))
	})
}

// Message names of the lines the server writes when no function named one.
const (
	MsgInvocation = "invocation"
	MsgRequest    = "request"
)

// entry is what a request's one line says besides its status and
// duration. The endpoint serving the request fills it in as it goes.
type entry struct {
	function   string
	invocation bool // POST /{function} of a registered function, not a forwarded route
	summary    Summary
	err        string // a failed invocation's error, or why a caller was refused
	ids        armIDs // a forwarded request's ARM ids
	// expected: the route meant its answer, whatever the status
	// (AnswerIsExpected); the line stays at Info.
	expected bool
}

// endpoint serves a request with serve and writes its one line. An
// invocation's line is its summary: the Summary its function returned (a
// tick, a dispatch batch), else "invocation", with the status, the
// duration and the error of a failed one, so each invocation costs exactly
// one line. Other requests (forwarded routes) get a "request" line; the
// host's readiness pings on GET / go to Debug so they do not drown the
// invocations. A panic is a 500 in the envelope shape, so one bad
// document cannot take the whole handler process down.
func (s *Server) endpoint(serve func(w http.ResponseWriter, r *http.Request, e *entry)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		var e entry
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.LogAttrs(r.Context(), slog.LevelError, "panic while handling request",
					slog.String("path", r.URL.Path),
					slog.String(logging.AttrFunction, e.function),
					slog.String("panic", fmt.Sprint(v)),
					slog.String("stack", string(debug.Stack())))
				if ww.Status() == 0 && ww.BytesWritten() == 0 {
					writeFailure(ww, http.StatusInternalServerError, fmt.Sprintf("internal error: panic: %v", v))
				}
			}
			s.writeLine(r, e, ww.Status(), time.Since(start))
		}()
		if s.limitBody(ww, r) {
			serve(ww, r, &e)
		}
	}
}

func (s *Server) writeLine(r *http.Request, e entry, status int, took time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	level, msg, attrs := e.line(r, status)
	attrs = append(attrs, slog.Int("status", status), slog.Float64("duration_ms", logging.Millis(took)))
	if e.err != "" {
		attrs = append(attrs, slog.String("error", e.err))
	}
	s.logger.LogAttrs(r.Context(), level, msg, attrs...)
}

// line is the level, message and attributes of the request's one line.
func (e entry) line(r *http.Request, status int) (slog.Level, string, []slog.Attr) {
	if !e.invocation {
		level := slog.LevelInfo
		switch {
		case e.expected:
		case status >= 500:
			level = slog.LevelError
		case e.err != "": // a refused caller
			level = slog.LevelWarn
		case r.URL.Path == "/" && status < 400:
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path)}
		if e.function != "" {
			attrs = append(attrs, slog.String(logging.AttrFunction, e.function))
		}
		return level, MsgRequest, append(attrs, e.ids.attrs()...)
	}
	level, msg := e.summary.Level, e.summary.Msg
	if msg == "" {
		level, msg = slog.LevelInfo, MsgInvocation
	}
	switch {
	case status >= 500:
		level = max(level, slog.LevelError)
	case status >= 400:
		level = max(level, slog.LevelWarn)
	}
	if e.err != "" {
		level = max(level, slog.LevelWarn)
	}
	return level, msg, append([]slog.Attr{slog.String(logging.AttrFunction, e.function)}, e.summary.Attrs...)
}

// limitBody caps the request body and answers 413 for a body declared
// over the cap; readBody turns an undeclared overflow into a 413 too. An
// invocation of a function with an OversizeFunc is left to invoke, which
// streams a body over the cap to it. It reports whether to serve on.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) bool {
	if name, ok := strings.CutPrefix(r.URL.Path, "/"); ok && r.Method == http.MethodPost && s.oversizeFor(name) != nil {
		return true
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeFailure(w, http.StatusRequestEntityTooLarge, tooLarge(r.ContentLength, s.cfg.MaxBodyBytes))
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	return true
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
