package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
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

// accessLog writes one line per request. The host's readiness pings on GET /
// go to Debug so they do not drown the invocations.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		var function string
		next.ServeHTTP(ww, r.WithContext(context.WithValue(r.Context(), functionSlotKey{}, &function)))
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		if r.URL.Path == "/" && status < 400 {
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Int("bytes", ww.BytesWritten()),
			slog.Duration("duration", time.Since(start))}
		if function != "" {
			attrs = append(attrs, slog.String(LogAttrFunction, function))
		}
		s.logger.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// functionSlotKey lets the router tell accessLog, which runs outside it,
// which function a request reached. Only the request's own goroutine writes
// and reads the slot.
type functionSlotKey struct{}

func slotFunction(ctx context.Context) string {
	if slot, ok := ctx.Value(functionSlotKey{}).(*string); ok {
		return *slot
	}
	return ""
}

// noteFunction records the function name for the access log and returns a
// context whose log lines carry it.
func noteFunction(ctx context.Context, name string) context.Context {
	if slot, ok := ctx.Value(functionSlotKey{}).(*string); ok {
		*slot = name
	}
	info := requestInfoFrom(ctx)
	info.function = name
	return withRequestInfo(ctx, info)
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
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
