// Package handlers is the Azure Functions custom-handler HTTP server, the
// transport between the Functions host and the lifecycle: it speaks the
// host's protocol (invocations of the trigger functions, forwarded HTTP
// requests, health pings, graceful shutdown), writes each request's one
// log line, applies the caller check (package auth) to every forwarded
// route, and knows nothing of what the functions do.
package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/logging"
)

// APIRoutePrefix is the host's default HTTP route prefix. host.json sets it
// to "" so forwarded paths are ARM's own, but a host left on the default
// forwards /api/..., so forwarded routes answer under both.
const APIRoutePrefix = "/api"

// Server routes the host's requests to registered functions. Register
// everything before serving: a chi router must not change while it
// routes, so Route refuses once the first request has been served.
type Server struct {
	cfg    Config
	logger *slog.Logger

	mu        sync.RWMutex // guards router changes and the maps below
	router    *chi.Mux
	functions map[string]InvocationFunc
	oversize  map[string]OversizeFunc
	forwarded map[string]bool // function names served by forwarded routes
	// serving is set, under mu, before the first request is routed.
	serving atomic.Bool
	health  healthChecks
}

// New builds a server. The logger's handler is wrapped with
// logging.Handler so every line logged with a request context carries the
// invocation id.
func New(cfg Config, logger *slog.Logger) *Server {
	s := &Server{
		cfg:       cfg.withDefaults(),
		logger:    logging.Logger(logger),
		router:    chi.NewRouter(),
		functions: map[string]InvocationFunc{},
		oversize:  map[string]OversizeFunc{},
		forwarded: map[string]bool{},
	}
	s.router.Use(s.withInvocationID)
	s.router.NotFound(s.endpoint(s.notFound))
	s.router.MethodNotAllowed(s.endpoint(s.methodNotAllowed))
	s.router.Method(http.MethodGet, "/", s.endpoint(s.serveHealth))
	s.router.Method(http.MethodHead, "/", s.endpoint(s.serveHealth))
	s.router.Handle("/{function}", s.endpoint(s.invoke))
	s.cfg.Auth.Announce(context.Background(), s.logger)
	return s
}

// Handle registers the invocation handler for POST /{name}; name is the
// function's folder name (the host posts to it).
func (s *Server) Handle(name string, fn InvocationFunc) error {
	if name == "" || strings.ContainsAny(name, "/{}") {
		return fmt.Errorf("function name %q: want a folder name without '/', '{' or '}'", name)
	}
	if fn == nil {
		return fmt.Errorf("function %q: nil handler", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.functions[name]; dup {
		return fmt.Errorf("function %q is already registered", name)
	}
	s.functions[name] = fn
	return nil
}

// OversizeFunc handles an invocation whose body is over MaxBodyBytes. The
// server does not hold such a body: the function reads the whole of it
// from body, as a stream (inv carries no Data or Metadata), and does what
// it can with it, rather than have the host retry a 413 that can never
// pass.
type OversizeFunc func(ctx context.Context, inv Invocation, body io.Reader) (Result, error)

// HandleOversize says what function name, registered with Handle, does
// with a body over the limit; without it such a body is refused with 413.
func (s *Server) HandleOversize(name string, fn OversizeFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.functions[name]; !ok || fn == nil {
		return fmt.Errorf("function %q: HandleOversize needs a function registered with Handle and a non-nil handler", name)
	}
	s.oversize[name] = fn
	return nil
}

func (s *Server) oversizeFor(name string) OversizeFunc {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.oversize[name]
}

// Route registers a forwarded HTTP route (host.json
// enableForwardingHttpRequest): the host replays the client's request on
// the original path and returns the handler's response as is. The route is
// served at pattern and at APIRoutePrefix+pattern. pattern is a chi pattern.
func (s *Server) Route(function, method, pattern string, h http.Handler) (err error) {
	if !strings.HasPrefix(pattern, "/") || pattern == "/" {
		return fmt.Errorf("route %q for %s: want an absolute path below /", pattern, function)
	}
	if h == nil {
		return fmt.Errorf("route %q for %s: nil handler", pattern, function)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving.Load() {
		return fmt.Errorf("route %q for %s: the server is already serving; register routes before the first request", pattern, function)
	}
	defer func() {
		// chi reports a malformed pattern by panicking; this is a wiring
		// error, so hand it back as one.
		if v := recover(); v != nil {
			err = fmt.Errorf("route %q for %s: %v", pattern, function, v)
		}
	}()
	// The caller check is part of the route: every HTTP function gets it
	// by being registered, none can forget it. A refusal's reason goes on
	// the request's line, never to the caller.
	wrapped := s.endpoint(func(w http.ResponseWriter, r *http.Request, e *entry) {
		e.function = function
		e.ids = stampARMIDs(w, r)
		if ref := s.cfg.Auth.Check(r.Header); ref != nil {
			e.err = ref.Reason
			writeJSON(w, ref.Status, ref.Body())
			return
		}
		h.ServeHTTP(entryWriter{w, e}, r.WithContext(logging.WithFunction(r.Context(), function)))
	})
	s.router.Method(method, pattern, wrapped)
	s.router.Method(method, APIRoutePrefix+pattern, wrapped)
	s.forwarded[function] = true
	return nil
}

// ServeHTTP makes the server usable with httptest and any http.Server.
// The first request closes registration of routes (see Route).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.serving.Load() {
		s.mu.Lock()
		s.serving.Store(true)
		s.mu.Unlock()
	}
	s.router.ServeHTTP(w, r)
}

// Run listens on 127.0.0.1:Port and serves until ctx is cancelled, then
// shuts down gracefully (see Serve).
func (s *Server) Run(ctx context.Context) error {
	ln, err := s.Listen(ctx)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Listen claims 127.0.0.1:Port, the port the host chose for the handler.
// A process that opens other listeners claims this one first: an
// ephemeral port the kernel hands out may be the very one the host found
// free.
func (s *Server) Listen(ctx context.Context) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr())
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", s.cfg.Addr(), err)
	}
	return ln, nil
}

// Serve serves on ln until ctx is cancelled. Cancellation (SIGTERM from
// main) stops accepting new requests and lets in-flight invocations finish
// for up to ShutdownTimeout; after that their contexts are cancelled and
// Serve returns an error saying so.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		// In-flight invocations must outlive ctx: shutdown waits for them.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:    slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "custom handler listening",
		slog.String("addr", ln.Addr().String()),
		slog.Any("functions", s.names()))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "shutting down; waiting for in-flight invocations",
		slog.Duration("timeout", s.cfg.ShutdownTimeout))
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil {
		_ = hs.Close()
		err = fmt.Errorf("graceful shutdown did not finish within %s; in-flight requests were cut off: %w",
			s.cfg.ShutdownTimeout, err)
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("serving on %s: %w", ln.Addr(), serr))
		}
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, "custom handler stopped")
	return nil
}

func (s *Server) names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.functions)+len(s.forwarded))
	for n := range s.functions {
		names = append(names, n)
	}
	for n := range s.forwarded {
		if _, dup := s.functions[n]; !dup {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// isForwarded reports whether name serves a forwarded route.
func (s *Server) isForwarded(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.forwarded[name]
}

func (s *Server) lookup(name string) (InvocationFunc, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn, ok := s.functions[name]
	return fn, ok
}

func (s *Server) invoke(w http.ResponseWriter, r *http.Request, e *entry) {
	name := chi.URLParam(r, "function")
	fn, ok := s.lookup(name)
	if !ok {
		if s.isForwarded(name) {
			// The host forwards HTTP-in, HTTP-out functions as they are
			// (host.json enableForwardingHttpRequest): it never posts them
			// an invocation, so there is no invocation form to serve.
			writeFailure(w, http.StatusNotFound, fmt.Sprintf("function %q is an HTTP function the host forwards (host.json "+
				"enableForwardingHttpRequest): it is served on its route, not invoked with POST /%s", name, name))
			return
		}
		writeFailure(w, http.StatusNotFound, fmt.Sprintf("no function named %q; registered: %s",
			name, strings.Join(s.names(), ", ")))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeFailure(w, http.StatusMethodNotAllowed, fmt.Sprintf(
			"function %q is invoked with POST and an invocation body, not %s", name, r.Method))
		return
	}
	e.function, e.invocation = name, true
	ctx := logging.WithFunction(r.Context(), name)
	inv := Invocation{Function: name, ID: logging.InvocationID(ctx), Header: r.Header}

	var body []byte
	var err error
	if of := s.oversizeFor(name); of != nil {
		var rest io.Reader
		if body, rest, err = s.readOversize(r); err == nil && rest != nil {
			res, err := of(ctx, inv, rest) // over the limit: the function reads it as a stream
			s.answer(w, e, name, res, err)
			return
		}
	} else {
		body, err = ReadBody(r)
	}
	if err != nil {
		s.fail(w, e, name, err, nil)
		return
	}
	if inv.InvokeRequest, err = decodeInvocation(body); err != nil {
		s.fail(w, e, name, err, nil)
		return
	}
	res, err := fn(ctx, inv)
	s.answer(w, e, name, res, err)
}

// readOversize reads an invocation body for a function that takes bodies
// over the limit: up to the limit it is read whole (rest is nil); beyond
// it, rest streams what was read and what follows.
func (s *Server) readOversize(r *http.Request) (body []byte, rest io.Reader, err error) {
	body, err = io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading request body: %w", err)
	}
	if int64(len(body)) <= s.cfg.MaxBodyBytes {
		return body, nil, nil
	}
	return nil, io.MultiReader(bytes.NewReader(body), r.Body), nil
}

// answer sends what a function returned and keeps its summary for the line.
func (s *Server) answer(w http.ResponseWriter, e *entry, name string, res Result, err error) {
	e.summary = res.Summary
	if err != nil {
		s.fail(w, e, name, err, res.Logs)
		return
	}
	writeResponse(w, http.StatusOK, res.InvokeResponse)
}

// fail maps an error to its status: malformed input 400, oversize 413,
// else 500. The error goes on the invocation's line.
func (s *Server) fail(w http.ResponseWriter, e *entry, name string, err error, logs []string) {
	status := http.StatusInternalServerError
	var tooBig *BodyTooLargeError
	switch {
	case errors.As(err, &tooBig):
		status = http.StatusRequestEntityTooLarge
	case events.IsMalformed(err):
		status = http.StatusBadRequest
	}
	e.err = err.Error()
	writeFailure(w, status, fmt.Sprintf("%s: %v", name, err), logs...)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, _ *entry) {
	writeFailure(w, http.StatusNotFound, fmt.Sprintf("no function or route serves %s %s", r.Method, r.URL.Path))
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request, _ *entry) {
	writeFailure(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
}
