package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// polled is one operation of a tick's page with what the page read for
// it, ready for tickOne.
type polled struct {
	item store.Item
	// op is nil when the document did not parse; parseErr says why.
	op       *document.OperationDocument
	parseErr error
	// read, when set, returns the operation's resource as the page read
	// it; nil leaves the job to read it itself (today's point read).
	read func() (*document.Resource, error)
	// snap is what the page's CS list calls said (nil: none were made).
	snap *snapshot
}

// preparePage reads what a page of operations needs before any of them
// runs: their resource documents with one ReadMany, and, with a CS batch
// size above 1, the CS objects they poll with list calls. A read that
// fails here costs nothing but the batching: the operations then read
// for themselves, as they did before batching.
func (e *Engine) preparePage(ctx context.Context, items []store.Item) []polled {
	ps := make([]polled, len(items))
	refs := make([]store.DocRef, 0, len(items))
	want := make([]int, 0, len(items)) // index in ps of each ref
	for i, it := range items {
		p := &ps[i]
		p.item = it
		if p.op, p.parseErr = document.ParseOperation(it.Body); p.parseErr != nil {
			continue
		}
		op := p.op
		if op.Properties.Status.IsTerminal() || op.PartitionKey == "" ||
			document.PartitionKey(subscriptionOf(op.Properties.ExternalID)) != op.PartitionKey {
			continue // no resource to read, or newJob refuses it anyway
		}
		refs = append(refs, store.DocRef{PartitionKey: op.PartitionKey, ID: document.CosmosID(op.Properties.ExternalID)})
		want = append(want, i)
	}
	if len(refs) == 0 {
		return ps
	}
	got, err := e.store.ReadMany(ctx, refs)
	if err != nil {
		if ctx.Err() == nil {
			withInvocation(ctx, e.log).Warn("batched resource read failed; the page's operations read one by one",
				"documents", len(refs), "error", err)
		}
		return ps
	}
	var hrefs []string
	for k, i := range want {
		p := &ps[i]
		res, rerr := parsedResource(got, refs[k], p.op.Properties.ExternalID)
		p.read = func() (*document.Resource, error) { return res, rerr }
		if res != nil && !credentialRequest(p.op.Properties.Request) {
			hrefs = append(hrefs, pollHrefs(p.op, res)...)
		}
	}
	if e.cfg.CSBatchSize > 1 && len(hrefs) > 0 {
		snap := prefetch(ctx, e.cs, withInvocation(ctx, e.log), hrefs, e.cfg.CSBatchSize, e.listConcurrency())
		for i := range ps {
			ps[i].snap = snap
		}
	}
	return ps
}

// parsedResource is readResource's answer from a ReadMany result: nil when
// the document is gone, errMalformed when it does not parse.
func parsedResource(got map[store.DocRef]store.Item, ref store.DocRef, resourceID string) (*document.Resource, error) {
	item, ok := got[ref]
	if !ok {
		return nil, nil
	}
	res, err := document.ParseResource(item.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing resource %s: %w: %w", resourceID, errMalformed, err)
	}
	return res, nil
}

// pollHrefs are the CS objects an operation's poll may read: its
// resource's CS object (or the one its create may have made) and the one
// its dispatch recorded. Reading one more than the poll needs costs an id
// in a list, never a request.
func pollHrefs(op *document.OperationDocument, res *document.Resource) []string {
	var out []string
	for _, h := range []string{res.ClusterServiceID(), res.PendingClusterServiceID(), op.Properties.InternalID} {
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// credentialRequest: credential operations poll break-glass credentials,
// which are read per cluster, not in batches.
func credentialRequest(r document.Request) bool {
	return r == document.RequestRequestCredential || r == document.RequestRevokeCredentials
}

// listConcurrency bounds one page's concurrent list calls.
func (e *Engine) listConcurrency() int { return max(1, min(4, e.cfg.PollConcurrency/8)) }
