package dispatchoperations

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
)

// A change-feed batch can be larger than the handler's body limit: up to
// maxItemsPerInvocation documents of up to 2 MB each, escaped twice. Such
// a batch used to be refused with 413 on every delivery, holding its lease
// for the whole retry schedule and naming no document. It is read as a
// stream instead: one document at a time, keeping those that can be
// dispatched; a document over Cosmos DB's item limit (which no store
// takes, so no write about it can ever succeed) is skipped and logged
// with its id.

// MsgDocumentsSkipped is the Error line naming change-feed documents that
// can never be dispatched because they are over Cosmos DB's item limit;
// the batch's other documents are dispatched.
const MsgDocumentsSkipped = "changefeed.documents_skipped"

// InvokeOversize handles a batch whose body is over the handler's limit
// (see handlers.Server.HandleOversize).
func (f *Function) InvokeOversize(ctx context.Context, inv handlers.Invocation, body io.Reader) (handlers.Result, error) {
	docs, meta, err := events.ReadBatch(body, BindingName)
	if err != nil {
		return handlers.Result{}, err
	}
	inv.Metadata = meta
	return f.dispatch(ctx, inv, docs)
}

// splitOversize sets aside the documents over Cosmos DB's item limit: no
// store takes them, so no dispatch of them can ever be written.
func splitOversize(docs []json.RawMessage) (keep []json.RawMessage, skipped []string) {
	keep = docs[:0:0]
	for _, d := range docs {
		if len(d) > store.MaxDocumentBytes {
			skipped = append(skipped, idOrSize(d))
			continue
		}
		keep = append(keep, d)
	}
	return keep, skipped
}

func idOrSize(d json.RawMessage) string {
	if id := store.TopLevelID(d); id != "" && len(id) <= store.MaxIDBytes {
		return id
	}
	return fmt.Sprintf("(no id, %d bytes)", len(d))
}
