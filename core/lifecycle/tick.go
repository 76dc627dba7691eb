package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
	"github.com/hcpops/hcpops/core/store"
)

// tick streams the active operations (and terminal ones still owing ARM a
// notification) page by page into PollConcurrency workers, from the
// change-fed view of the active set or, when it must be rebuilt, from the
// store (source.go). Each page is prepared first (page.go): its resources
// answered by the view or read in one round trip, its CS objects read in
// list calls. Preparing blocks while every worker is busy, so the tick
// never holds more than a few pages in memory besides the view.
//
// Operations whose CS calls keep failing must not hold the workers every
// tick: while backed off they get the checks that need no CS
// (deadline, supersede) and nothing else; once due again they are only
// noted during the stream and retried after it, most overdue first, so a
// healthy operation never waits behind a sick one.
func (e *Engine) tick(ctx context.Context) (TickResult, error) {
	r := &run{Engine: e, wave: newWave(), pool: e.workers(ctx)}
	now := e.clock()
	var (
		mu      sync.Mutex
		retries []retry
	)
	due := func(next retry) {
		mu.Lock()
		defer mu.Unlock()
		retries = append(retries, next)
	}
	q := store.ActiveOperationsQuery{WithPendingNotification: true, PageSize: e.cfg.PageSize}
	src := e.pollSource(ctx)
	active := e.newActiveTally(now)
	err := e.streamPages(ctx, src, q, func(page opPage) {
		ps := e.preparePage(ctx, src, page, now)
		active.page(ctx, ps)
		for i := range ps {
			if ctx.Err() != nil {
				return
			}
			p := &ps[i] // the closure holds a pointer, not a copy of the polled
			r.pool.Go(func() { r.tickPolled(ctx, p, due) })
		}
	})
	r.pool.Wait()
	src.finish(ctx, err)
	if err == nil && len(retries) > 0 {
		slices.SortFunc(retries, func(a, b retry) int { return a.next.Compare(b.next) })
		for _, next := range retries {
			if err = ctx.Err(); err != nil {
				break
			}
			r.pool.Go(func() { r.tickRetry(ctx, next) })
		}
		r.pool.Wait()
	}
	// Deletes complete on a 404 only now that every answer is in.
	r.settleWave(ctx, err == nil)
	res := r.count.tickResult()
	if err == nil {
		err = ctx.Err() // workers may have been cut short after the last page
	}
	active.report(ctx, err == nil)
	if err != nil {
		return res, fmt.Errorf("poll tick: %w", err)
	}
	return res, nil
}

// pool runs functions on at most a fixed number of goroutines: Go blocks
// while all are busy, which is what keeps a tick from reading pages faster
// than its workers poll them. A function whose turn comes after ctx ended
// is not run. The functions report errors their own way.
//
// Its goroutines live until Wait, each running function after function:
// a goroutine per function (errgroup) grew a fresh stack for every
// operation of every tick (runtime.newstack, a large share of an
// unchanged tick: docs/decisions/active-set-view.md#goroutine-stacks).
// Go may be called from several goroutines; Wait once they are done
// calling it, after which the pool can be used again.
type pool struct {
	ctx   context.Context
	limit int
	mu    sync.Mutex
	work  chan func()
	n     int // goroutines started since the last Wait
	tasks sync.WaitGroup
	live  sync.WaitGroup
}

func newPool(ctx context.Context, n int) *pool {
	return &pool{ctx: ctx, limit: max(1, n), work: make(chan func())}
}

func (p *pool) Go(f func()) {
	p.tasks.Add(1)
	p.mu.Lock()
	if p.n < p.limit {
		p.n++
		p.live.Add(1)
		go p.run(p.work)
	}
	work := p.work
	p.mu.Unlock()
	work <- f // unbuffered: waits for an idle goroutine
}

func (p *pool) run(work <-chan func()) {
	defer p.live.Done()
	for f := range work {
		if p.ctx.Err() == nil {
			f()
		}
		p.tasks.Done()
	}
}

// Wait waits for every function handed to Go, then ends the goroutines.
func (p *pool) Wait() {
	p.tasks.Wait()
	p.mu.Lock()
	close(p.work)
	p.work, p.n = make(chan func()), 0
	p.mu.Unlock()
	p.live.Wait()
}

// workers is the pool a tick or a batch works on operations with:
// PollConcurrency at a time.
func (e *Engine) workers(ctx context.Context) *pool { return newPool(ctx, e.cfg.PollConcurrency) }

// standing is what the tick knows of an operation's recent CS calls.
type standing int

const (
	healthy     standing = iota // no failure on record
	sickDue                     // failed before; its next CS attempt is due
	sickResting                 // failed before; backed off, no CS call now
)

// retry is a backed-off operation whose next CS attempt is due. The tick
// holds at most one per schedule entry, so their number is bounded like
// the schedule.
type retry struct {
	ref  store.DocRef
	next time.Time
}

// streamPages hands src's pages to pagePreparers goroutines, so a page's
// batched reads overlap the next page's and the workers stay fed.
func (e *Engine) streamPages(ctx context.Context, src *pollSource, q store.ActiveOperationsQuery, prepare func(opPage)) error {
	preparers := newPool(ctx, e.pagePreparers())
	err := src.stream(ctx, q, func(page opPage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		preparers.Go(func() { prepare(page) })
		return nil
	})
	preparers.Wait()
	return err
}

// tickPolled sorts one streamed operation: one that is due for a retry is
// handed to due for after the stream; the others are worked on now, a
// backed-off one without CS, with what their page read for them.
func (r *run) tickPolled(ctx context.Context, p *polled, due func(retry)) {
	switch {
	case p.parseErr != nil:
		r.count.polled.Add(1)
		r.count.errors.Add(1)
		pk, id := addressOf(p.raw)
		r.log.ErrorContext(ctx, "skipping a malformed operation document", "document_id", id, "partition_key", pk, "error", p.parseErr)
		return
	case p.due != nil:
		due(*p.due)
		return
	}
	r.tickOne(ctx, p.op, p.st, p.pageRead)
}

// tickRetry re-reads a due operation (the stream's copy is a while old)
// and gives it its CS attempt.
func (r *run) tickRetry(ctx context.Context, due retry) {
	op, err := r.readOperation(ctx, due.ref.PartitionKey, due.ref.ID)
	switch {
	case err != nil:
		r.count.polled.Add(1)
		r.count.errors.Add(1)
		r.log.WarnContext(ctx, "re-reading a backed-off operation failed; the next tick retries",
			"document_id", due.ref.ID, "error", err)
	case op == nil:
		r.pollAt.forget(due.ref)
	default:
		r.tickOne(ctx, op, sickDue, pageRead{})
	}
}

// tickOne moves one operation as far as it can go this tick; a resting
// one gets no CS call. Its errors are counted and logged
// once, never returned: one operation must not stop the others. A failed
// CS call backs the operation off; a successful step resets it.
func (r *run) tickOne(ctx context.Context, op *document.OperationDocument, st standing, page pageRead) {
	r.count.polled.Add(1)
	ctx = cs.WithNamedOperation(ctx, op)
	key := docRef(op)
	if op.Properties.Status.IsTerminal() {
		r.pollAt.forget(key)
		r.overdue.forget(op)
		if op.Properties.NotificationURI != "" {
			r.retryNotification(ctx, op)
		}
		return
	}
	j, err := r.jobFor(ctx, op, page)
	if err == nil {
		err = r.advance(ctx, j, st)
		if err == nil && (st != sickResting || j.op.Properties.Status.IsTerminal()) {
			r.pollAt.forget(key)
			r.unrecognized.forget(op)
		}
	}
	switch {
	case err == nil:
	case isCallError(err):
		r.count.errors.Add(1)
		next := r.pollAt.failed(key, r.clock())
		level := slog.LevelWarn
		if cs.Classify(err) == cs.Unrecognized && !r.unrecognized.first(key, "unrecognized") {
			level = slog.LevelDebug // said once already: no evidence, retried until CS itself answers
		}
		r.logFor(op).Log(ctx, level, "clusters service call failed; operation backed off",
			append(cs.CallAttrs(err), "class", cs.Classify(err).String(), "next_attempt", next, "error", err)...)
	case errors.Is(err, errStillDue):
		// Keeps its schedule entry, so the next tick tries again, graceless.
	case errors.Is(err, errRetryLater):
		r.count.errors.Add(1)
		r.logFor(op).InfoContext(ctx, "operation left for the next tick", "reason", err)
	case errors.Is(err, errResourceUnreadable):
		r.skipped(r.logFor(op), op, SkipResourceUnreadable, err)
	case ctx.Err() != nil:
		// The tick ran out of budget; the next one picks up from the store.
	default:
		r.count.errors.Add(1)
		r.logFor(op).WarnContext(ctx, "operation poll failed; the next tick retries", "error", err)
	}
}

// isCallError says err is a failed CS call. Its own function: the
// *cs.CallError errors.As fills escapes, and declared in tickOne it was
// allocated for every poll, failed or not.
func isCallError(err error) bool {
	var ce *cs.CallError
	return errors.As(err, &ce)
}

// errStillDue is advance's word that a handed-over dispatch was deferred
// (dispatchOne logged why): the operation keeps its backoff entry, which
// is due, instead of becoming healthy again and waiting out DispatchGrace.
var errStillDue = errors.New("dispatch deferred; still due")

// backedOff reports whether op has a CS-call schedule (a dispatch put off
// by a busy CS sets one).
func (r *run) backedOff(op *document.OperationDocument) bool {
	_, ok := r.pollAt.lookup(docRef(op))
	return ok
}

// advance is one step of the safety net and the poll for a live
// operation: finish deletes whose resource is gone, cancel superseded
// operations, enforce deadlines, then dispatch what the change feed missed
// or poll CS and record what it says. A resting operation stops before CS.
//
// The deadline comes before any CS call only for work not yet dispatched.
// Every dispatched operation, deletes and backed-off ones included, is
// asked first at its due attempt (ARO-HCP checks a delete's deadline
// first): CS's word that the work is under way holds it past the deadline
// (overdue.go), CS's word that it is done ends it, and a CS that cannot
// be read then fails it unless CS's last word was that the work is under
// way (lastWord: an update written Updating, a create Provisioning), so
// an object that never answered still cannot keep it alive. That call
// is bounded by CLUSTERS_SERVICE_TIMEOUT.
func (r *run) advance(ctx context.Context, j *job, st standing) error {
	op := j.op
	switch g := j.owner(); {
	case g.cancel:
		return r.cancelSuperseded(ctx, j)
	case g.skip != "":
		r.skipped(j.log, op, g.skip, nil)
		return nil
	case j.res == nil && !legacyDelete(j):
		return r.completeDelete(ctx, j) // the new approach's evidence: the document is gone
	}
	r.skips.forget(op)
	dispatched := j.h.dispatched(j)
	if !dispatched {
		// Work CS was never given: no word of CS's can hold it.
		if expired, err := r.expireIfLate(ctx, j, nil, nil); expired || err != nil {
			return err
		}
	}
	if st == sickResting {
		r.count.backedOff.Add(1)
		return nil
	}

	if !dispatched {
		// One with a failed CS call on record was tried already (by a
		// change-feed batch that handed it over, or a tick): no grace. Nor
		// for a child whose cluster is in CS now (follow.go).
		early := st == healthy && r.clock().Sub(op.Properties.StartTime) < r.cfg.DispatchGrace
		if early && !r.parentInClusterService(ctx, j) {
			return nil // the change feed should get to it first
		}
		o, err := r.dispatchOne(ctx, docRef(op))
		switch {
		case o != outcomeDispatched:
		case early:
			r.count.dispatched.Add(1)
			j.log.InfoContext(ctx, "dispatched a child whose cluster is now in clusters service")
		default:
			r.count.dispatched.Add(1)
			j.log.InfoContext(ctx, "dispatched an operation the change feed missed")
		}
		if err == nil && o == outcomeDeferred && (st != healthy || r.backedOff(op)) {
			return errStillDue // keeps its schedule: due, or put off by a busy CS
		}
		return err
	}

	polled, pollErr := j.h.poll(ctx, j)
	r.wave.observe(j, polled, pollErr)
	if pollErr == nil && polled.absent == "" && op.Properties.Request == document.RequestDelete {
		r.absence.shown(docRef(op)) // CS showed the object: its window starts again
	}
	// What the poll learned is written even when the tick's budget ran
	// out meanwhile: the write has a context of its own (writeCtx), made
	// only for a write: otherwise its timer, armed and stopped for every
	// poll, is a large share of an unchanged tick, which writes nothing
	// (docs/decisions/active-set-view.md#a-polls-write-context).
	if pollErr == nil && polled.gone {
		if r.wave.hold(j, polled) {
			return nil // decided with the tick's other answers (wave.go)
		}
		wctx, cancel := r.writeCtx(ctx)
		defer cancel()
		return r.completeDelete(wctx, j)
	}
	var (
		status arm.ProvisioningState
		cerr   *arm.CloudErrorBody
	)
	if pollErr == nil {
		status, cerr, pollErr = verdict(ctx, j, polled)
	}
	if pollErr != nil || !status.IsTerminal() {
		// The clock moved while CS was asked. expireIfLate writes with a
		// context of its own; CS's word that the work is under way holds
		// the operation past its deadline (overdue.go).
		var word *state.OperationState
		if pollErr == nil {
			word = working(polled.states)
		} else {
			word = r.lastWord(j, pollErr)
		}
		if expired, err := r.expireIfLate(ctx, j, pollErr, word); expired || err != nil {
			return err
		}
	}
	if pollErr != nil {
		return r.unlessContradiction(ctx, j, pollErr)
	}
	if !statusWanted(j.op, status, cerr) {
		return nil // what CS said is recorded already
	}
	wctx, cancel := r.writeCtx(ctx)
	defer cancel()
	_, err := r.updateOperationStatus(wctx, j, status, cerr)
	return err
}

// writeCtx is the context of a write that must happen even though ctx may
// be spent (the tick's budget ran out during a CS call): ctx's values,
// not its deadline, bounded by WriteTimeout.
func (w *writer) writeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), w.writeTimeout)
}

// expireIfLate fails an operation past its deadline. cause, when set, is
// the poll error that kept it from a verdict; the deadline holds anyway.
// word, when set, is CS's word that the work is under way, which holds
// the operation past its deadline instead (overdue.go).
func (r *run) expireIfLate(ctx context.Context, j *job, cause error, word *state.OperationState) (bool, error) {
	deadline := r.cfg.deadline(j)
	if deadline.IsZero() || r.clock().Before(deadline) { // zero: none for this operation
		return false, nil
	}
	if word != nil {
		r.holdOverdue(ctx, j, deadline, word)
		return false, nil
	}
	if cause != nil {
		j.log.WarnContext(ctx, "deadline passed while clusters service could not be read", append(cs.CallAttrs(cause), "error", cause)...)
	}
	// The expiry must land even when ctx is the tick's spent budget.
	ctx, cancel := r.writeCtx(ctx)
	defer cancel()
	changed, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, deadlineError(j.h.work, deadline))
	if changed {
		r.count.expired.Add(1)
		j.log.WarnContext(ctx, "operation failed: deadline passed", "deadline", deadline)
	}
	return true, err
}
