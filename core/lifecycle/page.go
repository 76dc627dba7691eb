package lifecycle

import (
	"context"
	"maps"
	"time"

	"github.com/hcpops/hcpops/core/activeset"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// polled is one operation of a tick's page with what the page read for
// it, ready for tickPolled.
type polled struct {
	// op is nil when the document did not parse; parseErr says why and
	// raw is the document, for its address.
	op       *document.OperationDocument
	parseErr error
	raw      []byte
	// st is the operation's standing; due, when set, defers it to the
	// retries after the stream (its next CS attempt is due).
	st  standing
	due *retry
	pageRead
	// listed says the operation's objects were in the page's CS list
	// calls.
	listed bool
}

// pageRead is what a tick's page read for an operation before its job
// runs; the zero value leaves the job to read everything itself.
type pageRead struct {
	// read says the page read the operation's resource: res (nil when the
	// document is gone) or resErr, which readResource would have returned.
	// Unread, the job reads it (a point read).
	read   bool
	res    *document.Resource
	resErr error
	// cs is what the page's CS list calls said; nil: none were made.
	cs *snapshot
	// job, when set, is the operation's job, made by newJob with the
	// resource the page read.
	job *job
}

// preparePage reads what a page of operations needs before any of them
// runs: their resource documents from src (the view, or one ReadMany),
// and, with a CS batch size above 1, the CS objects the healthy ones poll,
// with list calls. A read that fails here costs only the batching: the
// operations then read for themselves, one by one.
func (e *Engine) preparePage(ctx context.Context, src *pollSource, page opPage, now time.Time) []polled {
	ops := src.operations(page)
	ps := make([]polled, len(ops))
	refs := make([]store.DocRef, 0, len(ops))
	want := make([]int, 0, len(ops)) // index in ps of each ref
	for i, o := range ops {
		p := &ps[i]
		if p.op, p.parseErr = o.Doc, o.Err; p.parseErr != nil {
			p.raw = o.Raw
			continue
		}
		op := p.op
		if op.Properties.Status.IsTerminal() {
			continue // owes at most a notification
		}
		key := docRef(op)
		if next, ok := e.pollAt.lookup(key); ok {
			if !now.Before(next) {
				p.due = &retry{ref: key, next: next}
				continue
			}
			p.st = sickResting
		}
		ref, ok := opResourceRef(op)
		if !ok {
			continue // newJob refuses it without reading
		}
		refs = append(refs, ref)
		want = append(want, i)
	}
	if len(refs) == 0 {
		return ps
	}
	got, unanswered, err := src.resources(ctx, refs)
	if err != nil && ctx.Err() == nil {
		e.log.WarnContext(ctx, "batched resource read failed; the page's operations read one by one",
			"documents", len(unanswered), "error", err)
	}
	var hrefs []string
	for k, i := range want {
		if unanswered[refs[k]] {
			continue
		}
		p := &ps[i]
		p.res, p.resErr = parsedResource(got[k], p.op.Properties.ExternalID)
		p.read = true
		res := p.res
		if res == nil || p.st != healthy || onCredentials(p.op.Properties.Request) {
			continue
		}
		j, err := e.newJob(p.op, res)
		if err != nil {
			continue // jobFor refuses it again, saying why, when the tick runs it
		}
		if p.job = j; pollsCS(j) {
			n := len(hrefs)
			hrefs = appendPollHrefs(hrefs, p.op, res)
			p.listed = len(hrefs) > n
		}
	}
	if e.cfg.CSBatchSize <= 1 || len(hrefs) == 0 || ctx.Err() != nil {
		return ps
	}
	snap := prefetch(ctx, e.cs, e.log, hrefs, e.cfg.CSBatchSize, e.listConcurrency())
	for i := range ps {
		ps[i].cs = snap
	}
	if ctx.Err() != nil {
		e.backOffCut(ctx, ps)
	}
	return ps
}

// backOffCut backs off the operations of a page whose list calls the
// tick's budget cut short: they will not run this tick, and a list that
// cannot answer within a budget must not starve them tick after tick. As
// with a GET cut short, their deadlines then come before CS, and they are
// retried one by one once due.
func (e *Engine) backOffCut(ctx context.Context, ps []polled) {
	now, n := e.clock(), 0
	for _, p := range ps {
		if p.listed {
			e.pollAt.failed(docRef(p.op), now)
			n++
		}
	}
	if n > 0 {
		e.log.WarnContext(ctx, "the tick's budget ran out during a batched clusters service read; its operations are backed off",
			"operations", n)
	}
}

// readMany is ReadMany in chunks the store accepts (a page may be larger).
func (e *Engine) readMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	if len(refs) <= store.MaxReadMany {
		return e.store.ReadMany(ctx, refs)
	}
	out := make(map[store.DocRef]store.Item, len(refs))
	for start := 0; start < len(refs); start += store.MaxReadMany {
		got, err := e.store.ReadMany(ctx, refs[start:min(start+store.MaxReadMany, len(refs))])
		if err != nil {
			return nil, err
		}
		maps.Copy(out, got)
	}
	return out, nil
}

// parsedResource is readResource's answer from what the page read of a
// resource: nil when the document is gone, errMalformed when it does not
// parse.
func parsedResource(r activeset.Res, resourceID string) (*document.Resource, error) {
	if r.Err != nil {
		return nil, unreadableResource(resourceID, r.Err)
	}
	return r.Doc, nil
}

// appendPollHrefs appends the CS objects an operation's poll may read:
// its resource's CS object (or the one its create may have made) and the
// one its dispatch recorded. Reading one more than the poll needs costs
// an id in a list, never a request.
func appendPollHrefs(hrefs []string, op *document.OperationDocument, res *document.Resource) []string {
	for _, h := range [...]string{res.ClusterServiceID(), res.PendingClusterServiceID(), op.Properties.InternalID} {
		if h != "" {
			hrefs = append(hrefs, h)
		}
	}
	return hrefs
}

// pollsCS reports whether j's poll this tick reads its CS objects: it
// passes the skip rules and its dispatch is done. The others read nothing
// (or dispatch, with calls of their own), so listing their objects would
// only spend ids, and a skipped operation must cost CS nothing.
func pollsCS(j *job) bool {
	g := j.owner()
	return g.skip == "" && !g.cancel && j.h.dispatched(j)
}

// listConcurrency bounds one page's concurrent list calls: a page holds
// one cluster list per batch and one child list per parent cluster.
func (e *Engine) listConcurrency() int { return max(1, min(4, e.cfg.PollConcurrency/8)) }

// pagePreparers is how many pages are read ahead at once: each waits
// about one CS round trip for its lists, so a few keep the workers fed
// without holding more than a few pages in memory.
func (e *Engine) pagePreparers() int { return max(1, min(8, e.cfg.PollConcurrency/4)) }
