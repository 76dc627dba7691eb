// Package ocm is the production clusterservice.Client, built on
// ocm-sdk-go's aro_hcp/v1alpha1 API (and clusters_mgmt/v1 for break-glass
// credentials). It maps SDK objects to and from the plain types of package
// clusterservice, every CS error to *clusterservice.Error, and every failed
// call to a *clusterservice.CallError naming it. One observer in its
// transport records each request in a clusterservice.Recorder (an
// invocation's CS numbers, CS's health) and logs it at Debug.
package ocm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openshift-online/ocm-sdk-go"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Client talks to Clusters Service. It is safe for concurrent use.
type Client struct {
	conn *sdk.Connection
	// lists is the connection of the lists hcpops decides from.
	lists   *sdk.Connection
	logger  *slog.Logger
	timeout time.Duration
	idForm  string // IDSearchOr or IDSearchIn
	rec     *cs.Recorder
}

var _ cs.Client = (*Client)(nil)

// New connects to CS as cfg says. A zero RetryLimit means no SDK retries;
// a zero Timeout leaves every deadline to the caller's context.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Client, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("clusters service config: %w", err)
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = DefaultRetryInterval
	}
	conn, err := dial(ctx, cfg, logger, evidence)
	if err != nil {
		return nil, err
	}
	// Lists hcpops decides from get a connection of their own, whose
	// answers must have OCM's list shape (evidence.go): what a request
	// needs checked is a property of the client it is sent with, not of
	// its context.
	lists, err := dial(ctx, cfg, logger, listEvidence)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	logger.DebugContext(ctx, "clusters service client ready", "url", cfg.URL, "authenticated", cfg.authenticated(),
		"retry_limit", cfg.RetryLimit)
	idForm := cfg.IDSearch
	if idForm == "" {
		idForm = IDSearchOr
	}
	return &Client{conn: conn, lists: lists, logger: logger, timeout: cfg.Timeout, idForm: idForm, rec: cfg.Recorder}, nil
}

// dial builds one SDK connection to CS, whose answers pass check.
func dial(ctx context.Context, cfg Config, logger *slog.Logger, check func(http.RoundTripper) http.RoundTripper) (*sdk.Connection, error) {
	var b *sdk.ConnectionBuilder
	if cfg.authenticated() {
		b = sdk.NewConnectionBuilder()
		if cfg.Token != "" {
			b.Tokens(cfg.Token)
		}
		if cfg.ClientID != "" {
			b.Client(cfg.ClientID, cfg.ClientSecret)
		}
		if cfg.TokenURL != "" {
			b.TokenURL(cfg.TokenURL)
		}
	} else {
		b = sdk.NewUnauthenticatedConnectionBuilder()
	}
	b.Logger(sdkLogger{logger}).
		URL(cfg.URL).
		RetryLimit(cfg.RetryLimit).
		RetryInterval(cfg.RetryInterval).
		Insecure(cfg.Insecure).
		TransportWrapper(observe(logger, cfg.Recorder)).
		TransportWrapper(check).
		TransportWrapper(limitBodies).
		TransportWrapper(keepIdleConns)
	if cfg.NoRetryJitter {
		b.RetryJitter(0)
	}
	if cfg.Transport != nil {
		b.TransportWrapper(func(http.RoundTripper) http.RoundTripper { return cfg.Transport }) // innermost: instead of the SDK's
	}
	if cfg.CAFile != "" {
		b.TrustedCAFile(cfg.CAFile)
	}
	conn, err := b.BuildContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to clusters service %s: %w", cfg.URL, err)
	}
	return conn, nil
}

// Close releases the connection's idle sockets and token refreshers.
func (c *Client) Close() error {
	if err := errors.Join(c.conn.Close(), c.lists.Close()); err != nil {
		return fmt.Errorf("closing clusters service connection: %w", err)
	}
	return nil
}

// callCtx bounds one call, retries and pages included, by the configured
// timeout even when the caller has a deadline of its own: a poll tick's
// deadline is minutes away, and one CS object that never answers must not
// hold a worker that long. The sooner of the two deadlines wins.
func (c *Client) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// observe is the one observer of every request to CS, retries and pages
// included: it records each in rec (per invocation, and CS's health) and
// logs it at Debug. It wraps the SDK's own inner transport (next), so
// TLS, CA and proxy settings stay in force. Token requests (to the SSO
// endpoint, outside CS's /api/) are logged but not recorded: they are no
// CS calls. With debug off and nothing recording, it only passes the
// request on.
func observe(l *slog.Logger, rec *cs.Recorder) sdk.TransportWrapper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			debug := l.Enabled(req.Context(), slog.LevelDebug)
			record := rec != nil && strings.HasPrefix(req.URL.Path, "/api/")
			if !debug && !record {
				return next.RoundTrip(req)
			}
			start := time.Now()
			resp, err := next.RoundTrip(req)
			elapsed := time.Since(start)
			if record {
				rec.Record(req.Context(), elapsed, classOf(resp, err))
			}
			switch {
			case !debug:
			case err != nil:
				l.DebugContext(req.Context(), "clusters service request failed", "method", req.Method,
					"path", req.URL.Path, "duration", elapsed, "error", err)
			default:
				l.DebugContext(req.Context(), "clusters service request", "method", req.Method,
					"path", req.URL.Path, "status", resp.StatusCode, "duration", elapsed)
			}
			return resp, err
		})
	}
}

// classOf is a request's outcome as the transport sees it: what kept it
// from an answer CS's own (evidence has turned any other error answer into
// an error), or the status of one. Its words are not read here, so a 400
// of CS's is a refusal whatever it says.
func classOf(resp *http.Response, err error) cs.Class {
	switch {
	case err != nil:
		return cs.Classify(err)
	case resp.StatusCode >= 400:
		if c, ok := cs.ByStatus(resp.StatusCode); ok {
			return c
		}
		switch resp.StatusCode {
		case http.StatusNotFound:
			return cs.Absent
		case http.StatusConflict:
			return cs.Exists
		}
		return cs.Refused
	}
	return cs.Answered
}

// call runs one Client method: bounded by the configured timeout (see
// callCtx), its failure a *cs.CallError naming the method, the href and
// how long it took, so no caller needs a wrapper to tell a CS fault.
func call[T any](ctx context.Context, c *Client, name, href string, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	start := time.Now()
	v, err := f(ctx)
	if err != nil {
		if errors.Is(err, cs.ErrInconsistentList) {
			c.rec.Unrecognized(ctx) // its pages were recorded as answered
		}
		return v, &cs.CallError{Call: name, Href: href, Elapsed: time.Since(start), Err: err}
	}
	return v, nil
}

// call0 is call for a method that returns no value.
func call0(ctx context.Context, c *Client, name, href string, f func(context.Context) error) error {
	_, err := call(ctx, c, name, href, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

func firstOf(hrefs []string) string {
	if len(hrefs) == 0 {
		return ""
	}
	return hrefs[0]
}

// idleConnsPerHost keeps connections for a poll tick that fans out to CS
// concurrently; Go's default of 2 makes most of those requests dial anew.
const idleConnsPerHost = 64

// keepIdleConns is the innermost wrapper, so next is the SDK's own
// *http.Transport, not yet used; it is returned as is.
func keepIdleConns(next http.RoundTripper) http.RoundTripper {
	if t, ok := next.(*http.Transport); ok {
		t.MaxIdleConnsPerHost = idleConnsPerHost
	}
	return next
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sdkLogger routes the SDK's logging to slog. Debug stays off: the SDK's
// debug mode dumps request and response bodies, tokens included. Info is
// demoted to slog Debug because the SDK is chatty there.
type sdkLogger struct{ l *slog.Logger }

func (s sdkLogger) DebugEnabled() bool { return false }
func (s sdkLogger) InfoEnabled() bool  { return s.l.Enabled(context.Background(), slog.LevelDebug) }
func (s sdkLogger) WarnEnabled() bool  { return s.l.Enabled(context.Background(), slog.LevelWarn) }
func (s sdkLogger) ErrorEnabled() bool { return s.l.Enabled(context.Background(), slog.LevelError) }

func (s sdkLogger) Debug(context.Context, string, ...any) {}

func (s sdkLogger) Info(ctx context.Context, format string, args ...any) {
	s.l.DebugContext(ctx, fmt.Sprintf(format, args...), "source", "ocm-sdk")
}

// Warn carries the operation the call was made for (cs.WithOperation), so
// the SDK's "will try again" lines are in that operation's history.
func (s sdkLogger) Warn(ctx context.Context, format string, args ...any) {
	s.l.WarnContext(ctx, fmt.Sprintf(format, args...), s.attrs(ctx)...)
}

func (s sdkLogger) Error(ctx context.Context, format string, args ...any) {
	s.l.ErrorContext(ctx, fmt.Sprintf(format, args...), s.attrs(ctx)...)
}

func (sdkLogger) attrs(ctx context.Context) []any {
	if id := cs.OperationOf(ctx); id != "" {
		return []any{"source", "ocm-sdk", "operation_id", id}
	}
	return []any{"source", "ocm-sdk"}
}

// Fatal only logs: a library must not exit the Functions host.
func (s sdkLogger) Fatal(ctx context.Context, format string, args ...any) {
	s.l.ErrorContext(ctx, fmt.Sprintf(format, args...), "source", "ocm-sdk", "fatal", true)
}
