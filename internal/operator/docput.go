package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// putDoc is one document of a doc put, checked.
type putDoc struct {
	ref  store.DocRef
	body json.RawMessage
}

// checkPut checks every document against what any store refuses (address,
// size), the same id twice and, unless unchecked, what the poll tick
// cannot parse, before a store is opened.
func checkPut(docs []json.RawMessage, unchecked bool) ([]putDoc, error) {
	out := make([]putDoc, 0, len(docs))
	seen := map[store.DocRef]int{}
	for i, raw := range docs {
		var env struct {
			ID           string `json:"id"`
			PartitionKey string `json:"partitionKey"`
		}
		_ = json.Unmarshal(raw, &env) // checked by checkEnvelope
		ref := store.DocRef{PartitionKey: env.PartitionKey, ID: env.ID}
		err := store.CheckAddress(ref.PartitionKey, ref.ID)
		if err == nil {
			err = store.CheckDocumentSize(raw)
		}
		if err == nil && !unchecked {
			err = checkParses(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (id %q): %w; nothing was written", i+1, env.ID, err)
		}
		if j, dup := seen[ref]; dup {
			return nil, fmt.Errorf("documents %d and %d: id %q in partition %s twice; nothing was written", j, i+1, ref.ID, ref.PartitionKey)
		}
		seen[ref] = i + 1
		out = append(out, putDoc{ref: ref, body: raw})
	}
	return out, nil
}

// checkParses refuses an operation or resource document the engine could
// not parse or act on: the tick would skip it every time, so writing it
// only hides the operation. The error names the field and the value.
func checkParses(raw []byte) error {
	kind, err := document.Sniff(raw)
	if err != nil {
		return fmt.Errorf("a document the poll tick cannot parse: %w (-unchecked writes it anyway)", err)
	}
	switch kind {
	case document.KindOperation:
		op, err := document.ParseOperation(raw)
		if err == nil {
			_, err = op.TargetKind()
		}
		if err == nil && !op.TargetInPartition() {
			err = fmt.Errorf("properties.externalId: %q belongs in partition %s, not %s", op.Properties.ExternalID,
				document.PartitionKey(document.SubscriptionOf(op.Properties.ExternalID)), op.PartitionKey)
		}
		if err != nil {
			return fmt.Errorf("an operation document the poll tick cannot parse: %w (-unchecked writes it anyway)", err)
		}
	case document.KindCluster, document.KindNodePool, document.KindExternalAuth:
		if _, err := document.ParseResource(raw); err != nil {
			return fmt.Errorf("a %s document the poll tick cannot parse: %w (-unchecked writes it anyway)", kind, err)
		}
	}
	return nil
}

// putStep is one write of a doc put and the line it prints.
type putStep struct {
	op   store.BatchOp
	line string
}

// docPut reads every document's current etag, then writes each partition's
// documents in transactional batches (as many as Cosmos DB's batch limits
// need). A batch that fails writes nothing; the error says which batches
// were written before it.
func docPut(ctx context.Context, s store.Store, docs []putDoc, stdout io.Writer) error {
	var order []string
	for _, d := range docs {
		if !slices.Contains(order, d.ref.PartitionKey) {
			order = append(order, d.ref.PartitionKey)
		}
	}
	steps := map[string][]putStep{}
	if err := planPut(ctx, s, docs, steps); err != nil {
		return fmt.Errorf("%w; nothing was written", err)
	}
	var written []string
	for _, pk := range order {
		for _, chunk := range chunkSteps(steps[pk]) {
			ops := make([]store.BatchOp, len(chunk))
			for i, st := range chunk {
				ops[i] = st.op
			}
			if _, err := s.Batch(ctx, pk, ops); err != nil {
				return putFailure(pk, err, written)
			}
			for _, st := range chunk {
				fmt.Fprintln(stdout, st.line)
				written = append(written, strings.Join(strings.Fields(st.line), " "))
			}
		}
	}
	return nil
}

// planPut reads the documents' current versions (in ReadMany pages) and
// turns each into a create or an etag-guarded replace, by partition.
func planPut(ctx context.Context, s store.Store, docs []putDoc, steps map[string][]putStep) error {
	for start := 0; start < len(docs); start += store.MaxReadMany {
		page := docs[start:min(start+store.MaxReadMany, len(docs))]
		refs := make([]store.DocRef, len(page))
		for i, d := range page {
			refs[i] = d.ref
		}
		cur, err := s.ReadMany(ctx, refs)
		if err != nil {
			return fmt.Errorf("reading the documents' current versions: %w", err)
		}
		for _, d := range page {
			st := putStep{op: store.BatchOp{Kind: store.OpCreate, Body: d.body}, line: "created  " + d.ref.ID}
			if it, ok := cur[d.ref]; ok {
				st = putStep{op: store.BatchOp{Kind: store.OpReplace, ID: d.ref.ID, Body: d.body, IfMatch: it.ETag}, line: "replaced " + d.ref.ID}
			}
			steps[d.ref.PartitionKey] = append(steps[d.ref.PartitionKey], st)
		}
	}
	return nil
}

// chunkSteps splits a partition's writes into batches within Cosmos DB's
// limits on steps and bytes.
func chunkSteps(steps []putStep) [][]putStep {
	var out [][]putStep
	var cur []putStep
	size := 0
	for _, st := range steps {
		if len(cur) == store.MaxBatchOps || len(cur) > 0 && size+len(st.op.Body) > store.MaxBatchBytes {
			out, cur, size = append(out, cur), nil, 0
		}
		cur = append(cur, st)
		size += len(st.op.Body)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// putFailure names the failed write and exactly what was written before
// it: batches on other partitions (or earlier batches of a partition past
// Cosmos DB's batch limits) cannot be rolled back with it.
func putFailure(pk string, err error, written []string) error {
	what := "nothing was written"
	if len(written) > 0 {
		what = "written before it stopped: " + strings.Join(written, ", ")
	}
	var be *store.BatchError
	if errors.As(err, &be) {
		hint := ""
		if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrConflict) {
			hint = " (it changed since it was read: read it again and retry)"
		}
		return fmt.Errorf("writing partition %s (%s %s): %w%s; that batch was rolled back, %s", pk, strings.ToLower(string(be.Op)), be.ID, be.Err, hint, what)
	}
	return fmt.Errorf("writing partition %s: %w; that batch was rolled back, %s", pk, err, what)
}
