package lifecycle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Absent means absent. CS's own 404 for the object of a delete (its poll,
// or the DELETE itself) makes the delete a candidate; it completes only
// when CS is shown to be looking at the right data, per group of
// candidates (the clusters of a tick; the node pools or external auths of
// one cluster), once every answer of the tick is in:
//
//   - strong: one OCM list answer whose id search names the candidates
//     and the group's witnesses (witness.go) returns every witness and
//     not the candidate: the same answer, from the same replica, saw live
//     objects and not this one. It completes in the tick. A candidate the
//     list returns is not absent (its window starts again).
//   - a witness CS does not return (the list misses it, its GET answers
//     404 or a body that is not CS's): the tick is no evidence for the
//     group. Its deletes stay held, and a cs.anomaly wave (Warn, alerted)
//     names the witnesses (witness_ids) and the deletes; no time passing
//     releases them while that lasts.
//   - the list failed, but every witness's own GET answered right: the
//     candidate's 404 counts as one read of its confirmation window. A
//     witness whose answer is not CS's own, or that hangs, is one sick
//     object: it is muted and others are read. One CS cannot serve at all
//     (429, 5xx from a gateway: CS as a whole) is no word either, but not
//     muted: with no witness answered the tick is no evidence either way
//     (seed 25233: a storm on every other cluster's read beside a
//     misrouted 404 completed a delete once its silent witnesses were
//     muted);
//   - no witness at all: likewise, every 404 counts as a read (a list
//     naming the candidate alone still shows it when CS has it);
//   - a node pool's or external auth's cluster whose document is gone:
//     its delete completed on corroborated absence, and took its children
//     with it in CS.
//
// The window (AbsenceWindow) confirms a candidate whose 404 was read at
// least absenceReads times, the first at least AbsenceWindow ago, with no
// answer in between that showed the object. Its state is in memory: a
// restart only starts the window again.

// absenceReads is the fewest reads of CS's 404 a window confirms.
const absenceReads = 3

// absenceRun is one candidate's reads of CS's 404 so far.
type absenceRun struct {
	first, last time.Time
	reads       int
}

// absences is the candidates' windows, by operation and href.
type absences struct {
	n  atomic.Int64 // len(runs): the unchanged tick's check is one load
	mu sync.Mutex
	// runs is bounded by the deletes in flight: an entry goes when its
	// delete completes, CS shows the object, or it is not read for two
	// windows (or two of the longest backoffs, when those are longer).
	runs map[heldKey]absenceRun
}

func newAbsences() *absences { return &absences{runs: map[heldKey]absenceRun{}} }

// read counts one read of CS's 404 for h at now and returns the run.
// Runs not read for forget are dropped first.
func (a *absences) read(h heldKey, now time.Time, forget time.Duration) absenceRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, r := range a.runs {
		if now.Sub(r.last) > forget {
			delete(a.runs, k)
		}
	}
	r := a.runs[h]
	if r.reads == 0 {
		r.first = now
	}
	r.reads++
	r.last = now
	a.runs[h] = r
	a.n.Store(int64(len(a.runs)))
	return r
}

// shown forgets the runs of ref: CS answered with its object.
func (a *absences) shown(ref store.DocRef) {
	if a.n.Load() == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.runs {
		if k.ref == ref {
			delete(a.runs, k)
		}
	}
	a.n.Store(int64(len(a.runs)))
}

func (r absenceRun) confirms(now time.Time, window time.Duration) bool {
	return r.reads >= absenceReads && now.Sub(r.first) >= window
}

// absenceGroup is the candidates judged by one set of witnesses and one
// list call: the tick's clusters, or one cluster's node pools or external
// auths.
type absenceGroup struct {
	kind    cs.HrefKind
	cluster string // the parent's href, for a child kind
	scope   witnessScope
	scoped  bool
	cands   []held404
}

// groupCandidates groups held by kind and, for children, by cluster.
func groupCandidates(held []held404) []*absenceGroup {
	type key struct {
		kind    cs.HrefKind
		cluster string
		scope   witnessScope
	}
	var order []*absenceGroup
	by := map[key]*absenceGroup{}
	for _, h := range held {
		kind, cluster := cs.ParseHref(h.href)
		if kind == cs.HrefCluster {
			cluster = ""
		}
		scope, ok := scopeOf(h.j, h.href)
		k := key{kind, cluster, scope}
		g := by[k]
		if g == nil {
			g = &absenceGroup{kind: kind, cluster: cluster, scope: scope, scoped: ok}
			by[k] = g
			order = append(order, g)
		}
		g.cands = append(g.cands, h)
	}
	return order
}

// absenceVerdict is what judging a tick's candidates came to.
type absenceVerdict struct {
	confirmed, waiting []held404
	// wrong are the witnesses CS did not answer right about; held, the
	// candidates that held for it.
	wrong, held []string
	strong      int // confirmed by a list that returned the witnesses
}

func (v *absenceVerdict) merge(o absenceVerdict) {
	v.confirmed = append(v.confirmed, o.confirmed...)
	v.waiting = append(v.waiting, o.waiting...)
	v.wrong = append(v.wrong, o.wrong...)
	v.held = append(v.held, o.held...)
	v.strong += o.strong
}

// judgeAbsence decides the tick's candidates (the package comment above).
func (e *Engine) judgeAbsence(ctx context.Context, held []held404) absenceVerdict {
	var v absenceVerdict
	for _, g := range groupCandidates(held) {
		e.judgeGroup(ctx, g, &v)
	}
	return v
}

func (e *Engine) judgeGroup(ctx context.Context, g *absenceGroup, v *absenceVerdict) {
	if g.kind == cs.HrefOther {
		e.window(g.cands, v) // no list reads it: the window alone
		return
	}
	if g.scoped && g.kind != cs.HrefCluster {
		// A child's cluster whose delete completed (on corroborated
		// absence) took its children with it in CS.
		parent, err := e.readResource(ctx, g.scope.pk, g.scope.parent)
		if err == nil && parent == nil {
			v.confirmed = append(v.confirmed, g.cands...)
			return
		}
	}
	var ws []witness
	if g.scoped {
		exclude := make(map[string]bool, len(g.cands))
		for _, c := range g.cands {
			exclude[c.href] = true
		}
		var err error
		if ws, err = e.witnessesOf(ctx, g.scope, exclude); err != nil {
			e.log.WarnContext(ctx, "looking up live objects to judge clusters service's 404s failed; the deletes wait for the next tick",
				"deletes", len(g.cands), "error", err)
			v.waiting = append(v.waiting, g.cands...)
			return
		}
	}
	batch := max(1, e.cfg.CSBatchSize-len(ws))
	for start := 0; start < len(g.cands); start += batch {
		e.judgeChunk(ctx, g, g.cands[start:min(start+batch, len(g.cands))], ws, v)
	}
}

// judgeChunk is one list call: candidates and witnesses in one id search.
func (e *Engine) judgeChunk(ctx context.Context, g *absenceGroup, cands []held404, ws []witness, v *absenceVerdict) {
	hrefs := make([]string, 0, len(cands)+len(ws))
	for _, c := range cands {
		hrefs = append(hrefs, c.href)
	}
	for _, w := range ws {
		hrefs = append(hrefs, w.href)
	}
	listed, err := e.listHrefs(ctx, g, hrefs)
	if err == nil {
		var missing []witness
		for _, w := range ws {
			if !listed[w.href] {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			e.witnessWrong(g, cands, missing, v)
			return
		}
		var unseen []held404
		for _, c := range cands {
			switch {
			case listed[c.href]:
				e.absence.shown(c.key().ref) // CS has it: the next poll reads it
				v.waiting = append(v.waiting, c)
			case len(ws) == 0:
				unseen = append(unseen, c) // no witness of the kind: the window alone
			default:
				v.confirmed = append(v.confirmed, c)
				v.strong++
			}
		}
		e.windowBesideOthers(ctx, g, unseen, v)
		return
	}
	e.log.InfoContext(ctx, "the list that would corroborate clusters service's 404s failed; its live objects are read one by one",
		append(cs.CallAttrs(err), "objects", len(hrefs), "error", err)...)
	wrong, answered := e.readWitnesses(ctx, g.kind, ws)
	switch {
	case len(wrong) > 0:
		e.witnessWrong(g, cands, wrong, v)
	case len(ws) > 0 && answered == 0:
		v.waiting = append(v.waiting, cands...) // no witness gave a word: no evidence either way
	default:
		e.windowBesideOthers(ctx, g, cands, v)
	}
}

// witnessWrong holds cands: CS did not answer right about ws.
func (e *Engine) witnessWrong(g *absenceGroup, cands []held404, ws []witness, v *absenceVerdict) {
	e.witness.forget(g.scope) // one may be gone since: the store is asked again
	v.wrong = append(v.wrong, sortedHrefs(ws)...)
	v.waiting = append(v.waiting, cands...)
	for _, c := range cands {
		v.held = append(v.held, c.href)
	}
}

// window counts one read of each candidate's 404 and confirms those whose
// window has passed.
func (e *Engine) window(cands []held404, v *absenceVerdict) {
	// A run not read for two windows is forgotten, or for two of the
	// longest gaps a backed-off delete's reads can have: a window shorter
	// than that gap must still see its reads add up.
	now, forget := e.clock(), 2*max(e.cfg.AbsenceWindow, e.cfg.PollBackoffMax)
	for _, c := range cands {
		if e.absence.read(c.key(), now, forget).confirms(now, e.cfg.AbsenceWindow) {
			v.confirmed = append(v.confirmed, c)
			continue
		}
		v.waiting = append(v.waiting, c)
	}
}

// listHrefs is the set of hrefs one OCM list answer returned.
func (e *Engine) listHrefs(ctx context.Context, g *absenceGroup, hrefs []string) (map[string]bool, error) {
	out := make(map[string]bool, len(hrefs))
	switch g.kind {
	case cs.HrefCluster:
		got, err := e.cs.ListClustersByHref(ctx, hrefs)
		for h := range got {
			out[h] = true
		}
		return out, err
	case cs.HrefNodePool:
		got, err := e.cs.ListNodePoolsByHref(ctx, g.cluster, hrefs)
		for h := range got {
			out[h] = true
		}
		return out, err
	default:
		got, err := e.cs.ListExternalAuthsByHref(ctx, g.cluster, hrefs)
		for h := range got {
			out[h] = true
		}
		return out, err
	}
}

// readWitness reads a witness the way a poll reads its kind.
func (e *Engine) readWitness(ctx context.Context, kind cs.HrefKind, href string) error {
	var err error
	switch kind {
	case cs.HrefCluster:
		_, err = e.cs.GetClusterStatus(ctx, href)
	case cs.HrefNodePool:
		_, err = e.cs.GetNodePoolStatus(ctx, href)
	default:
		_, err = e.cs.GetExternalAuth(ctx, href)
	}
	return err
}

// windowBesideOthers counts cands' reads towards their window, unless a
// node pool or external auth of another cluster, read through the same
// route, answers CS's own 404: a child with no sibling still has
// witnesses of its kind in its subscription, and a misroute of that kind
// must hold it however long it lasts. A cluster's witnesses are its
// subscription's clusters already.
func (e *Engine) windowBesideOthers(ctx context.Context, g *absenceGroup, cands []held404, v *absenceVerdict) {
	if len(cands) == 0 || g.kind == cs.HrefCluster || !g.scoped {
		e.window(cands, v)
		return
	}
	wider := witnessScope{pk: g.scope.pk, parent: document.SubscriptionResourceID(document.SubscriptionOf(g.scope.parent)),
		kind: g.scope.kind}
	exclude := map[string]bool{}
	for _, c := range cands {
		exclude[c.href] = true
	}
	others, err := e.witnessesOf(ctx, wider, exclude)
	if err != nil {
		e.log.WarnContext(ctx, "looking up live objects to judge clusters service's 404s failed; the deletes wait for the next tick",
			"deletes", len(cands), "error", err)
		v.waiting = append(v.waiting, cands...)
		return
	}
	wrong, answered := e.readWitnesses(ctx, g.kind, others)
	switch {
	case len(wrong) > 0:
		e.witness.forget(wider)
		e.witnessWrong(g, cands, wrong, v)
	case len(others) > 0 && answered == 0:
		v.waiting = append(v.waiting, cands...) // no other object of the kind gave a word
	default:
		e.window(cands, v)
	}
}

// readWitnesses reads each witness by its own GET and returns those CS
// answered its own 404 for (a contradiction, CS reading the wrong place)
// and how many it answered right. No word about one says nothing either
// way. A sick object (a body not CS's own, a hang) is muted for a while,
// so it cannot hold every delete of its kind; CS unable to serve at all
// (Unavailable) is not the object's doing, and it is read again.
func (e *Engine) readWitnesses(ctx context.Context, kind cs.HrefKind, ws []witness) (wrong []witness, answered int) {
	for _, w := range ws {
		err := e.readWitness(ctx, kind, w.href)
		switch cs.Classify(err) {
		case cs.Answered:
			answered++
		case cs.Absent:
			wrong = append(wrong, w)
		case cs.Unavailable:
		default:
			e.witness.silent(w.href, e.clock())
			e.log.InfoContext(ctx, "clusters service gave no word about a witness; others are read instead",
				append(cs.CallAttrs(err), "witness", w.href, "class", cs.Classify(err).String())...)
		}
	}
	return wrong, answered
}
