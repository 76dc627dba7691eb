// Package ocm is the production clusterservice.Client, built on
// ocm-sdk-go's aro_hcp/v1alpha1 API (and clusters_mgmt/v1 for break-glass
// credentials). It maps SDK objects to and from the plain types of package
// clusterservice, and every CS error to *clusterservice.Error.
package ocm

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/openshift-online/ocm-sdk-go"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Client talks to Clusters Service. It is safe for concurrent use.
type Client struct {
	conn    *sdk.Connection
	logger  *slog.Logger
	timeout time.Duration
	idForm  string // IDSearchOr or IDSearchIn
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
		TransportWrapper(logRequests(logger)).
		TransportWrapper(limitBodies).
		TransportWrapper(keepIdleConns)
	if cfg.CAFile != "" {
		b.TrustedCAFile(cfg.CAFile)
	}
	conn, err := b.BuildContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to clusters service %s: %w", cfg.URL, err)
	}
	logger.Debug("clusters service client ready", "url", cfg.URL, "authenticated", cfg.authenticated(),
		"retry_limit", cfg.RetryLimit)
	idForm := cfg.IDSearch
	if idForm == "" {
		idForm = IDSearchOr
	}
	return &Client{conn: conn, logger: logger, timeout: cfg.Timeout, idForm: idForm}, nil
}

// Close releases the connection's idle sockets and token refreshers.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
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

// logRequests logs every attempt, retries included. It wraps the SDK's own
// inner transport (next), so TLS, CA and proxy settings stay in force.
// With debug off it only passes the request on: building the log
// arguments cost more than the rest of the wrapper chain.
func logRequests(l *slog.Logger) sdk.TransportWrapper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if !l.Enabled(req.Context(), slog.LevelDebug) {
				return next.RoundTrip(req)
			}
			start := time.Now()
			resp, err := next.RoundTrip(req)
			if err != nil {
				l.DebugContext(req.Context(), "clusters service request failed", "method", req.Method,
					"path", req.URL.Path, "duration", time.Since(start), "error", err)
				return nil, err
			}
			l.DebugContext(req.Context(), "clusters service request", "method", req.Method,
				"path", req.URL.Path, "status", resp.StatusCode, "duration", time.Since(start))
			return resp, nil
		})
	}
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

func (s sdkLogger) Warn(ctx context.Context, format string, args ...any) {
	s.l.WarnContext(ctx, fmt.Sprintf(format, args...), "source", "ocm-sdk")
}

func (s sdkLogger) Error(ctx context.Context, format string, args ...any) {
	s.l.ErrorContext(ctx, fmt.Sprintf(format, args...), "source", "ocm-sdk")
}

// Fatal only logs: a library must not exit the Functions host.
func (s sdkLogger) Fatal(ctx context.Context, format string, args ...any) {
	s.l.ErrorContext(ctx, fmt.Sprintf(format, args...), "source", "ocm-sdk", "fatal", true)
}
