// Package dispatchoperations is the dispatchOperations function: the Cosmos
// DB change-feed trigger on the Resources container. It decodes the batch
// the host delivers and hands it to the lifecycle's dispatcher.
package dispatchoperations

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/handlers"
)

// Name is the function's folder name, the path the host posts to.
const Name = "dispatchOperations"

// BindingName is the trigger binding's name in function.json, the key of
// the batch in Data.
const BindingName = "documents"

// Dispatcher is the part of the lifecycle this function drives
// (*lifecycle.Engine satisfies it).
type Dispatcher interface {
	DispatchDocuments(ctx context.Context, docs []json.RawMessage) (lifecycle.DispatchResult, error)
}

// Function adapts change-feed invocations to a Dispatcher.
type Function struct {
	dispatcher Dispatcher
	logger     *slog.Logger
}

// New builds the function; logger may be nil.
func New(d Dispatcher, logger *slog.Logger) *Function {
	return &Function{dispatcher: d, logger: handlers.Logger(logger)}
}

// Register adds the function to the server under Name.
func (f *Function) Register(s *handlers.Server) error {
	return s.Handle(Name, f.Invoke)
}

// Invoke handles one batch. A malformed payload is a 400 and reaches nothing;
// a dispatcher error is a 500, so the retry policy in function.json has the
// host deliver the same batch again rather than checkpoint past it.
func (f *Function) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	raw, ok := inv.Data[BindingName]
	if !ok {
		return handlers.Result{}, handlers.BadInput("Data.%s is missing (Data has %s); is the cosmosDBTrigger binding named %q?",
			BindingName, keys(inv.Data), BindingName)
	}
	docs, err := DecodeDocuments(raw)
	if err != nil {
		return handlers.Result{}, err
	}
	var logs []string
	if rc, err := inv.RetryContext(); err != nil {
		// Retry bookkeeping is informational; a garbled one must not cost the batch.
		f.logger.WarnContext(ctx, "ignoring unreadable RetryContext", "error", err)
	} else if rc != nil {
		level := slog.LevelDebug // attempt 0 carries a RetryContext too
		if rc.RetryCount > 0 {
			level = slog.LevelWarn
			logs = append(logs, fmt.Sprintf("retry %d of %d for this batch", rc.RetryCount, rc.MaxRetryCount))
		}
		f.logger.Log(ctx, level, "change-feed batch retry context",
			"retry_count", rc.RetryCount, "max_retry_count", rc.MaxRetryCount, "previous_exception", string(rc.Exception))
	}
	if len(docs) == 0 {
		return handlers.Result{Logs: append(logs, "empty batch; nothing to dispatch")}, nil
	}
	res, err := f.dispatcher.DispatchDocuments(ctx, docs)
	if err != nil {
		logs = append(logs, "dispatch failed; counts so far: "+res.String())
		return handlers.Result{Logs: logs}, fmt.Errorf("dispatching a batch of %d documents: %w", len(docs), err)
	}
	summary := "dispatched batch: " + res.String()
	f.logger.InfoContext(ctx, summary,
		"documents", res.Documents, "operations", res.Operations, "dispatched", res.Dispatched,
		"skipped", res.Skipped, "deferred", res.Deferred)
	return handlers.Result{Logs: append(logs, summary)}, nil
}

func keys(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "no keys"
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, fmt.Sprintf("%q", k))
	}
	slices.Sort(ks)
	return "keys " + strings.Join(ks, ", ")
}
