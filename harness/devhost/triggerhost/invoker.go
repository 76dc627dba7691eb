package triggerhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/events"
)

// DefaultHostVersion is the Functions host version this host announces;
// handlers only log it.
const DefaultHostVersion = "4.1036.1.1"

// Endpoint is where the handler is and whether it is up; *Supervisor is one.
type Endpoint interface {
	BaseURL() string
	Ready(ctx context.Context) error
}

// Invoker posts invocation envelopes to the handler exactly as the host
// does: POST /{function}, {"Data","Metadata"}, the host's headers.
type Invoker struct {
	endpoint    Endpoint
	client      *http.Client
	clock       clock.Clock
	hostVersion string
	timeout     time.Duration
	newID       func() string
	logger      *slog.Logger
}

// InvocationError is an invocation the handler failed (non-2xx or an
// unreadable answer) or that never reached it.
type InvocationError struct {
	Function     string
	InvocationID string
	Status       int // 0 when no answer came
	Body         string
	Err          error
}

func (e *InvocationError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("invoking %s (%s): %v", e.Function, e.InvocationID, e.Err)
	}
	return fmt.Sprintf("invoking %s (%s): %v: %s", e.Function, e.InvocationID, e.Err, e.Body)
}

func (e *InvocationError) Unwrap() error { return e.Err }

// Result is a successful invocation's answer.
type Result struct {
	InvocationID string
	Status       int
	Outputs      map[string]json.RawMessage
	Logs         []string
	ReturnValue  json.RawMessage
}

func newInvoker(ep Endpoint, clk clock.Clock, hostVersion string, timeout time.Duration, logger *slog.Logger) *Invoker {
	return &Invoker{
		endpoint: ep,
		// Each invocation carries its own deadline; redirects are the
		// handler's answer, not something to follow.
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		clock:       clk,
		hostVersion: hostVersion,
		timeout:     timeout,
		newID:       uuid.NewString,
		logger:      logger,
	}
}

// sysMetadata is Metadata.sys, which the host adds to every invocation.
func (iv *Invoker) sysMetadata(function string) json.RawMessage {
	raw, _ := json.Marshal(events.SysMetadata{
		MethodName: function,
		UtcNow:     iv.clock.Now().UTC().Format(events.DotNetUTC),
		RandGuid:   uuid.NewString(),
	})
	return raw
}

// Invoke sends one invocation and waits for the answer. metadata gets sys
// added. A non-2xx answer is an *InvocationError, as the host's
// EnsureSuccessStatusCode makes it.
func (iv *Invoker) Invoke(ctx context.Context, function string, data, metadata map[string]json.RawMessage) (Result, error) {
	id := iv.newID()
	fail := func(status int, body string, err error) (Result, error) {
		return Result{}, &InvocationError{Function: function, InvocationID: id, Status: status, Body: body, Err: err}
	}
	meta := map[string]json.RawMessage{"sys": iv.sysMetadata(function)}
	for k, v := range metadata {
		meta[k] = v
	}
	body, err := json.Marshal(events.InvokeRequest{Data: data, Metadata: meta})
	if err != nil {
		return fail(0, "", fmt.Errorf("encoding the invocation: %w", err))
	}
	if err := iv.endpoint.Ready(ctx); err != nil {
		return fail(0, "", err)
	}
	if iv.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, iv.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, iv.endpoint.BaseURL()+"/"+function, bytes.NewReader(body))
	if err != nil {
		return fail(0, "", err)
	}
	iv.setHeaders(req.Header, id)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")

	start := iv.clock.Now()
	resp, err := iv.client.Do(req)
	if err != nil {
		return fail(0, "", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fail(resp.StatusCode, "", fmt.Errorf("reading the answer: %w", err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(resp.StatusCode, excerpt(raw), fmt.Errorf("response status code does not indicate success: %d (%s)",
			resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	var out events.InvokeResponse
	if !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return fail(resp.StatusCode, excerpt(raw), fmt.Errorf("answer has content type %q, not JSON", resp.Header.Get("Content-Type")))
	}
	if err := json.Unmarshal(raw, &out); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fail(resp.StatusCode, excerpt(raw), fmt.Errorf("answer is not an invocation result object: %v", err))
	}
	for _, line := range out.Logs {
		iv.logger.LogAttrs(ctx, slog.LevelInfo, line, slog.String("function", function), slog.String("invocation_id", id))
	}
	iv.logger.LogAttrs(ctx, slog.LevelDebug, "invocation succeeded", slog.String("function", function),
		slog.String("invocation_id", id), slog.Duration("took", iv.clock.Now().Sub(start)))
	return Result{InvocationID: id, Status: resp.StatusCode, Outputs: out.Outputs, Logs: out.Logs, ReturnValue: out.ReturnValue}, nil
}

func (iv *Invoker) setHeaders(h http.Header, id string) {
	h.Set(events.HeaderInvocationID, id)
	h.Set(events.HeaderHostVersion, iv.hostVersion)
	h.Set("User-Agent", "Azure-Functions-Host/"+iv.hostVersion)
}

func excerpt(b []byte) string {
	const limit = 512
	s := strings.TrimSpace(string(b))
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
