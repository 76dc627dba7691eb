package lifecycle

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// A 404 wave is not evidence. CS's own 404 for the object of a delete is
// what completes it, but only once CS is shown to be looking at the right
// data (absence.go). A tick gathers its 404-based candidates and decides
// them once its reads are in, against what else CS said in that tick:
//
//   - a wave: CS answered 404 for an object that must exist (the object
//     of a create or update it accepted, a credential it issued) or for a
//     cluster whose children it answered: those are witnesses answering
//     wrong, so no delete completes on a 404 this tick, a cs.anomaly
//     record says so, and the next tick judges afresh;
//   - otherwise each group of candidates is judged by its witnesses and
//     its confirmation window (absence.go).
//
// Some 404s for objects that must exist do not hold it (wave_hold.go).

// MsgAnomaly names the record of a tick whose 404s were not trusted
// alone.
const MsgAnomaly = "cs.anomaly"

// Verdicts of a cs.anomaly record.
const (
	// VerdictWave: 404s for objects that must exist; nothing completed on
	// a 404.
	VerdictWave = "wave"
	// VerdictReleased: deletes completed on their 404s, and a 404 for an
	// object that must exist no longer held them, having held them
	// waveHoldTicks ticks in a row.
	VerdictReleased = "released"
)

// absentMin is the fewest 404s for objects that must exist that stay a
// wave however long they last (wave_hold.go).
const absentMin = 3

// sampleSize bounds the ids a cs.anomaly record names.
const sampleSize = 5

// waveHoldTicks is how many ticks in a row one operation's 404 may hold
// the wave alone: 30 timer periods of 10 s, five minutes, longer than a
// misrouted window we have seen last, far shorter than a delete's
// deadline.
const waveHoldTicks = 30

// wave is what one tick's polls heard from CS about their objects. Its
// workers share it.
type wave struct {
	// answered is the objects CS answered with the object itself: every
	// healthy poll counts one, so it takes no lock.
	answered atomic.Int64

	mu       sync.Mutex
	children map[string]int // by cluster href: its children CS answered
	absent   []string       // hrefs CS answered its own 404 for
	// mustExist are the 404s for objects that must exist.
	mustExist []held404
	// released: 404s for objects that must exist no longer held against
	// the tick (waveHoldTicks).
	released int
	held     []held404
}

// held404 is an operation whose object CS answered its own 404 for,
// waiting for the tick's verdict, with what the verdict writes once it
// trusts the 404 (in wave.mustExist, an object that must exist: nothing).
type held404 struct {
	j    *job
	href string
	settle
}

// settle is what a trusted 404 means for a held operation: the write it
// makes then, and the line it logs each tick it still waits.
type settle struct {
	write   func(*run, context.Context, *job) error
	waiting string
}

// completesDelete: a delete whose object CS does not have is done.
func completesDelete() settle {
	return settle{(*run).completeDelete, "delete not completed on clusters service's 404 this tick: not corroborated yet"}
}

// failsNeverCreated: an update of a child CS never had cannot be made
// (update.go unrecorded).
func failsNeverCreated() settle {
	return settle{(*run).failNeverCreated, "update not failed as never created on clusters service's 404 this tick: not corroborated yet"}
}

func (h held404) key() heldKey { return heldKey{docRef(h.j.op), h.href} }

type heldKey struct {
	ref  store.DocRef
	href string
}

func newWave() *wave { return &wave{children: map[string]int{}} }

// observe notes what j's poll heard: r and err as the handler's poll
// returned them. A nil wave (a dispatch batch) notes nothing.
func (w *wave) observe(j *job, r pollResult, err error) {
	if w == nil {
		return
	}
	switch href := polledHref(j); {
	case r.absent != "":
		w.mu.Lock()
		defer w.mu.Unlock()
		w.absent = append(w.absent, r.absent)
	case err == nil && href != "":
		w.answered.Add(1)
		if kind, cluster := cs.ParseHref(href); kind == cs.HrefNodePool || kind == cs.HrefExternalAuth {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.children[cluster]++
		}
	}
}

// hold keeps a delete CS answered 404 for until the tick's verdict;
// false when there is no wave to hold it (complete it now).
func (w *wave) hold(j *job, r pollResult) bool {
	if w == nil || r.absent == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, held404{j: j, href: r.absent, settle: completesDelete()})
	return true
}

// holdDispatch keeps a dispatch whose call CS answered its own 404 for
// (a delete's DELETE, a child update's read of its object), as hold does
// a poll's, to be settled as s says; a nil wave (a dispatch batch) holds
// nothing: the tick dispatches it again.
func (w *wave) holdDispatch(j *job, href string, s settle) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.absent = append(w.absent, href)
	w.held = append(w.held, held404{j: j, href: href, settle: s})
}

// polledHref is the CS object j's poll reads: a delete's target, else the
// resource's CS object (a credential request's cluster).
func polledHref(j *job) string {
	if j.op.Properties.Request == document.RequestDelete {
		return deleteTarget(j)
	}
	if j.res != nil {
		if href := j.res.ClusterServiceID(); href != "" {
			return href
		}
	}
	return j.op.Properties.InternalID
}

// contradicted is the 404s no deletion explains: objects that must exist,
// and clusters whose children CS answered in the same tick.
func (w *wave) contradicted() (mustExist, parents []string) {
	for _, h := range w.absent {
		if kind, _ := cs.ParseHref(h); kind == cs.HrefCluster && w.children[h] > 0 {
			parents = append(parents, h)
		}
	}
	return hrefsOf(w.mustExist), parents
}

// unconfirmed counts, by operation, the ticks in a row a 404 for an
// object that must exist held the wave, and the operations released from
// it (with when their 404 was last seen, to forget them once it stops).
type unconfirmed struct {
	mu       sync.Mutex
	holds    map[store.DocRef]int
	released map[store.DocRef]time.Time
}

func newUnconfirmed() *unconfirmed {
	return &unconfirmed{holds: map[store.DocRef]int{}, released: map[store.DocRef]time.Time{}}
}

// settleWave decides the deletes the tick's 404s would complete, once
// every poll of the tick is in, and completes those it trusts on the
// tick's workers. complete is false when the tick could not read its
// operations through: it then completes nothing, and the next tick
// polls them again.
func (r *run) settleWave(ctx context.Context, complete bool) {
	w := r.wave
	w.mu.Lock()
	defer w.mu.Unlock()
	if complete {
		r.release(ctx, w)
	}
	mustExist, parents := w.contradicted()
	polled := int(w.answered.Load()) + len(w.absent)
	var v absenceVerdict
	verdict := ""
	switch {
	case len(mustExist) > 0 || len(parents) > 0:
		verdict, v.waiting = VerdictWave, w.held
	case len(w.held) == 0:
	case !complete || ctx.Err() != nil:
		r.log.InfoContext(ctx, "the tick ended before its deletes could be judged; the next tick polls them again",
			"deletes", len(w.held))
		return
	default:
		// Clusters first: a child whose cluster's delete completes now is
		// judged with its cluster gone.
		clusters, children := splitClusters(w.held)
		v = r.judgeAbsence(ctx, clusters)
		r.completeAll(ctx, v.confirmed)
		more := r.judgeAbsence(ctx, children)
		r.completeAll(ctx, more.confirmed)
		v.merge(more)
		if len(v.wrong) > 0 {
			// Witnesses are objects that must exist: CS missing them is a
			// wave, alerted as one.
			verdict = VerdictWave
		}
	}
	if verdict == "" && w.released > 0 {
		verdict = VerdictReleased
	}
	if verdict != "" {
		r.logAnomaly(ctx, w, verdict, polled, len(v.confirmed), v.waiting, append(mustExist, v.wrong...), parents, v.wrong)
	}
	for _, h := range v.waiting {
		// Held by CS contradicting itself: a Warn, once a hold, so `ops`
		// shows why the delete waits (its last problem) until it moves.
		if verdict == VerdictWave && h.j.op.Properties.Request == document.RequestDelete && r.held.first(docRef(h.j.op), "held") {
			h.j.log.WarnContext(ctx, MsgDeleteHeld, "verdict", verdict, "cluster_service_id", h.href)
			continue
		}
		h.j.log.InfoContext(ctx, h.waiting, "verdict", verdict, "cluster_service_id", h.href)
	}
}

// MsgDeleteHeld is the line an operator reads in `ops` for a delete whose
// 404 a witness contradicts: held, whatever time passes, until CS answers
// right about its witnesses.
const MsgDeleteHeld = "delete held: clusters service answers 404 for live objects beside it, so its 404 is no evidence until CS answers right"

// completeAll completes the confirmed deletes on the tick's workers.
func (r *run) completeAll(ctx context.Context, confirmed []held404) {
	if len(confirmed) == 0 {
		return
	}
	if ctx.Err() != nil {
		r.log.InfoContext(ctx, "the tick ended before its deletes could complete; the next tick polls them again",
			"deletes", len(confirmed))
		return
	}
	for _, h := range confirmed {
		r.pool.Go(func() { r.completeHeld(ctx, h) })
	}
	r.pool.Wait()
}

// splitClusters splits held into cluster deletes and the others.
func splitClusters(held []held404) (clusters, others []held404) {
	for _, h := range held {
		if kind, _ := cs.ParseHref(h.href); kind == cs.HrefCluster {
			clusters = append(clusters, h)
		} else {
			others = append(others, h)
		}
	}
	return clusters, others
}

// completeHeld settles an operation whose 404 the tick's verdict trusts;
// a failure leaves it for the next tick, as any failed step of a poll.
func (r *run) completeHeld(ctx context.Context, h held404) {
	wctx, cancel := r.writeCtx(ctx)
	defer cancel()
	r.absence.shown(docRef(h.j.op))
	if err := h.write(r, wctx, h.j); err != nil {
		r.count.errors.Add(1)
		h.j.log.WarnContext(ctx, "settling an operation on clusters service's 404 failed; the next tick retries", "error", err)
	}
}

// logAnomaly writes MsgAnomaly for a wave (CS contradicted itself) or a
// release, as a Warn.
func (e *Engine) logAnomaly(ctx context.Context, w *wave, verdict string, polled, confirmed int, waiting []held404, mustExist, parents, witnesses []string) {
	level := slog.LevelWarn
	sample := make([]string, 0, sampleSize)
	for _, list := range [][]string{mustExist, parents, hrefsOf(waiting)} {
		for _, h := range list {
			if len(sample) < sampleSize {
				sample = append(sample, h)
			}
		}
	}
	e.log.LogAttrs(ctx, level, MsgAnomaly,
		slog.String("verdict", verdict),
		slog.Int("polled", polled),
		slog.Int("absent", len(w.absent)),
		slog.Int("must_exist_absent", len(mustExist)),
		slog.Int("must_exist_released", w.released),
		slog.Int("parents_absent", len(parents)),
		slog.Int("deletes_held", len(waiting)),
		slog.Int("deletes_confirmed", confirmed),
		slog.Any("sample_ids", sample),
		slog.Any("witness_ids", append([]string{}, witnesses[:min(len(witnesses), sampleSize)]...)), // [] rather than null
	)
}

func hrefsOf(hs []held404) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.href
	}
	return out
}
