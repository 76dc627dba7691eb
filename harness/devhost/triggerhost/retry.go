package triggerhost

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// retryContext is Metadata.RetryContext. Exception is a .NET exception as
// Newtonsoft serializes one, trimmed to the members a handler could use.
type retryContext struct {
	RetryCount    int
	MaxRetryCount int
	Exception     *dotnetException
}

type dotnetException struct {
	ClassName string
	Message   string
}

// invokeWithPolicy invokes fn and, when it has a retry policy, invokes it
// again after each failure until the policy is spent, as the WebJobs SDK
// does for triggers that support retries. Every attempt of a function with a
// policy carries RetryContext, the first with RetryCount 0. The last error is
// returned; the caller decides whether to move on (the change feed does).
func (h *Host) invokeWithPolicy(ctx context.Context, fn functionapp.Function, data map[string]json.RawMessage) error {
	policy := fn.Retry
	var last error
	for retry := 0; ; retry++ {
		var meta map[string]json.RawMessage
		if policy != nil {
			rc := retryContext{RetryCount: retry, MaxRetryCount: policy.MaxRetryCount}
			if last != nil {
				rc.Exception = &dotnetException{ClassName: "System.Net.Http.HttpRequestException", Message: last.Error()}
			}
			raw, _ := json.Marshal(rc)
			meta = map[string]json.RawMessage{"RetryContext": raw}
		}
		_, err := h.invoker.Invoke(ctx, fn.Name, data, meta)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = err
		if policy == nil || policy.Exhausted(retry+1) {
			h.logger.LogAttrs(ctx, slog.LevelError, "invocation failed", slog.String("function", fn.Name),
				slog.Int("retries", retry), slog.Any("error", err))
			return err
		}
		delay := policy.Delay(retry + 1)
		h.logger.LogAttrs(ctx, slog.LevelWarn, "invocation failed; retrying", slog.String("function", fn.Name),
			slog.Int("retry", retry+1), slog.Int("max_retries", policy.MaxRetryCount),
			slog.Duration("delay", delay), slog.Any("error", err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-h.clock.After(delay):
		}
	}
}
