// Package dispatchoperations is the dispatchOperations function: the Cosmos
// DB change-feed trigger on the Resources container. It decodes the batch
// the host delivers and hands it to the lifecycle's dispatcher.
package dispatchoperations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/logging"
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
	return &Function{dispatcher: d, logger: logging.Logger(logger)}
}

// Register adds the function to the server under Name.
func (f *Function) Register(s *handlers.Server) error {
	if err := s.Handle(Name, f.Invoke); err != nil {
		return err
	}
	return s.HandleOversize(Name, f.InvokeOversize)
}

// MsgBatch names the telemetry record of a change-feed batch: the
// invocation's one line.
const MsgBatch = "dispatch.batch"

// Invoke handles one batch. A malformed payload is a 400 and reaches nothing;
// documents that can never be dispatched are skipped by the dispatcher (200);
// a transient dispatcher error is a 500, so the retry policy in function.json
// has the host deliver the same batch again rather than checkpoint past it.
// On the last attempt the documents given up are logged at Error first.
// The batch's record is the Summary, the invocation's one log line;
// nothing goes in Logs, which the host would log a second time (and drops
// on failure).
func (f *Function) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	raw, ok := inv.Data[BindingName]
	if !ok {
		return handlers.Result{}, events.Malformed("Data.%s is missing (Data has %s); is the cosmosDBTrigger binding named %q?",
			BindingName, keys(inv.Data), BindingName)
	}
	docs, err := events.DecodeDocuments("Data."+BindingName, raw)
	if err != nil {
		return handlers.Result{}, err
	}
	return f.dispatch(ctx, inv, docs)
}

// dispatch hands a decoded batch to the dispatcher, less the documents
// that can never be dispatched, which it logs once by id.
func (f *Function) dispatch(ctx context.Context, inv handlers.Invocation, docs []json.RawMessage) (handlers.Result, error) {
	all := len(docs)
	docs, oversize := splitOversize(docs)
	if len(oversize) > 0 {
		f.logger.ErrorContext(ctx, MsgDocumentsSkipped, "document_ids", oversize, "documents", all,
			"error", fmt.Sprintf("over Cosmos DB's item limit of %d bytes (2 MB): no store takes them, so they can never be dispatched", store.MaxDocumentBytes))
	}
	rc, err := inv.RetryContext()
	if err != nil {
		// Retry bookkeeping is informational; a garbled one must not cost the batch.
		f.logger.WarnContext(ctx, "ignoring unreadable RetryContext", "error", err)
	}
	if rc == nil {
		rc = &events.RetryContext{}
	}
	level := slog.LevelInfo // attempt 0 carries a RetryContext too
	if rc.RetryCount > 0 {
		level = slog.LevelWarn
	}
	var res lifecycle.DispatchResult
	start := time.Now()
	if len(docs) > 0 {
		res, err = f.dispatcher.DispatchDocuments(ctx, docs)
	}
	attrs := append([]slog.Attr{
		slog.Int("documents", all),
		slog.Int("operations", res.Operations),
		slog.Int("dispatched", res.Dispatched),
		slog.Int("skipped", res.Skipped),
		slog.Int("deferred", res.Deferred),
		slog.Int("oversize_skipped", len(oversize)),
		slog.Int("retry_count", rc.RetryCount),
		slog.Int("max_retry_count", rc.MaxRetryCount),
		slog.Float64("wall_ms", logging.Millis(time.Since(start))),
	}, res.CS.Attrs()...)
	out := handlers.Result{Summary: handlers.Summary{Msg: MsgBatch, Level: level, Attrs: attrs}}
	if err != nil {
		if lastAttempt(rc) {
			f.giveUp(ctx, rc, docs, err)
		}
		return out, fmt.Errorf("dispatching a batch of %d documents: %w", len(docs), err)
	}
	return out, nil
}

// MsgBatchGivenUp is the stable message of the log line naming documents
// the host will checkpoint past (telemetry queries match on it).
const MsgBatchGivenUp = "changefeed.batch_given_up"

// lastAttempt reports whether the host will not deliver this batch again
// after a failure: retries are used up, or there is no retry policy (no
// RetryContext) at all. MaxRetryCount -1 retries forever.
func lastAttempt(rc *events.RetryContext) bool {
	return rc == nil || (rc.MaxRetryCount >= 0 && rc.RetryCount >= rc.MaxRetryCount)
}

// giveUp logs, at Error and once, the documents the host is about to skip;
// the tick's safety net dispatches those operations later, and this line
// is how an operator sees why they waited.
func (f *Function) giveUp(ctx context.Context, rc *events.RetryContext, docs []json.RawMessage, err error) {
	var ids []string
	if de := (*lifecycle.DispatchError)(nil); errors.As(err, &de) {
		ids = de.DocumentIDs
	}
	if len(ids) == 0 { // the dispatcher could not say which: name them all
		ids = documentIDs(docs)
	}
	attrs := []any{"document_ids", ids, "documents", len(docs), "error", err}
	if rc != nil {
		attrs = append(attrs, "retry_count", rc.RetryCount, "max_retry_count", rc.MaxRetryCount)
	}
	f.logger.ErrorContext(ctx, MsgBatchGivenUp, attrs...)
}

// documentIDs reads each document's id, skipping ones without a string id.
func documentIDs(docs []json.RawMessage) []string {
	ids := make([]string, 0, len(docs))
	for _, d := range docs {
		var a struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(d, &a) == nil && a.ID != "" {
			ids = append(ids, a.ID)
		}
	}
	return ids
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
