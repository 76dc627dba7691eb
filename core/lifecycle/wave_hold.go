package lifecycle

import (
	"context"
	"slices"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Two 404s for objects that must exist are not held against the tick:
//
//   - a child's (or a credential's) whose cluster is being deleted: the
//     delete explains it. A child create or update is then Canceled, as
//     the frontend's cluster delete cancels its children's operations;
//   - one operation's, once it has held waveHoldTicks ticks in a row with
//     fewer than absentMin such 404s in the tick: it is released, judged
//     on its own (its operation backs off as any failed call, and its
//     deadline ends it), logged once and counted (must_exist_released).
//     Three or more at once stay a wave however long it lasts: that is
//     what a misrouted CS with creates in flight looks like.

// absence is how the tick counts CS's own 404 for an object that must
// exist.
type absence int

const (
	absenceHeld      absence = iota // holds the tick's 404-based completions
	absenceExplained                // its cluster is being deleted
	absenceReleased                 // held waveHoldTicks ticks already
)

// note records a 404 for an object that must exist.
func (w *wave) note(j *job, href string, a absence) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.absent = append(w.absent, href)
	if a == absenceHeld {
		w.mustExist = append(w.mustExist, held404{j: j, href: href})
	}
}

// unlessContradiction is a poll's error as the tick handles it. CS's 404
// for an object that must exist is a contradiction the next tick must see
// again to judge afresh, so it does not back the operation off as a failed
// call would (a backed-off create would leave the next tick of a
// misrouted CS with only deletes to judge by): it is left for the next
// tick as is. A 404 its cluster's delete explains, or one released after
// holding the wave waveHoldTicks ticks, is the operation's own (wave.go's
// header).
func (r *run) unlessContradiction(ctx context.Context, j *job, err error) error {
	w := r.wave
	if w == nil || j.op.Properties.Request == document.RequestDelete || cs.Classify(err) != cs.Absent {
		return err
	}
	href := polledHref(j)
	switch {
	case r.clusterDeleting(ctx, j):
		w.note(j, href, absenceExplained)
		if onCredentials(j.op.Properties.Request) {
			return err
		}
		return r.cancelUnderDeletedCluster(ctx, j, href)
	case r.unconfirmed.isReleased(docRef(j.op)):
		r.unconfirmed.stillReleased(docRef(j.op), r.clock())
		w.note(j, href, absenceReleased)
		return err
	}
	w.note(j, href, absenceHeld)
	return retryLater("clusters service answered 404 for %s, which it had accepted: %v", href, err)
}

// clusterDeleting reports whether j's cluster is being deleted: for a
// credential request the cluster itself, for a node pool or external auth
// its parent document (read only on this path, a 404 for an object that
// must exist).
func (e *Engine) clusterDeleting(ctx context.Context, j *job) bool {
	deleting := func(r *document.Resource) bool {
		_, marked := r.DeletionTimestamp()
		_, sent := r.ClusterServiceDeletionTimestamp()
		return marked || sent
	}
	switch {
	case j.res == nil:
		return false
	case j.kind == document.KindCluster:
		return onCredentials(j.op.Properties.Request) && deleting(j.res)
	}
	parentID, err := document.ParentClusterID(j.res.ResourceID())
	if err != nil {
		return false
	}
	parent, err := e.readResource(ctx, j.op.PartitionKey, parentID)
	if err != nil {
		j.log.WarnContext(ctx, "reading the cluster of an object clusters service answered 404 for failed", "error", err)
		return false
	}
	return parent == nil || deleting(parent)
}

// cancelUnderDeletedCluster WRITES Canceled: CS answered its own 404 for
// a child whose cluster is being deleted, so the child's create or update
// cannot finish; the frontend's cluster delete cancels such operations
// with the same words, and one it missed is ended the same way.
func (r *run) cancelUnderDeletedCluster(ctx context.Context, j *job, href string) error {
	wctx, cancel := r.writeCtx(ctx)
	defer cancel()
	changed, err := r.updateOperationStatus(wctx, j, arm.ProvisioningStateCanceled, supersededError())
	if changed {
		r.count.canceled.Add(1) // updateOperationStatus counted the write
		j.log.InfoContext(ctx, "operation canceled: its cluster is being deleted and clusters service answered 404 for its object",
			"cluster_service_id", href)
	}
	return err
}

// release takes out of mustExist the operations that held the wave
// waveHoldTicks ticks in a row (unconfirmed.hold), logging each once.
func (e *Engine) release(ctx context.Context, w *wave) {
	refs := make([]store.DocRef, len(w.mustExist))
	for i, m := range w.mustExist {
		refs[i] = m.key().ref
	}
	released := e.unconfirmed.hold(refs, e.clock(), 2*e.cfg.PollBackoffMax)
	if len(released) == 0 {
		return
	}
	w.mustExist = slices.DeleteFunc(w.mustExist, func(m held404) bool {
		if !slices.Contains(released, m.key().ref) {
			return false
		}
		m.j.log.WarnContext(ctx, "clusters service's 404 for an object that must exist held the tick's deletes too long; "+
			"it no longer holds them and the operation is judged on its own", "ticks", waveHoldTicks, "cluster_service_id", m.href)
		return true
	})
	w.released += len(released)
}

func (u *unconfirmed) isReleased(ref store.DocRef) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.released[ref]
	return ok
}

// hold counts the tick's 404s for objects that must exist: an operation
// absent from refs did not hold this tick (CS answered it, or it ended)
// and starts again from zero. With fewer than absentMin of them, those
// that held waveHoldTicks ticks in a row are released and returned.
// Released operations whose 404 was not seen for forget are forgotten.
func (u *unconfirmed) hold(refs []store.DocRef, now time.Time, forget time.Duration) (released []store.DocRef) {
	u.mu.Lock()
	defer u.mu.Unlock()
	next := make(map[store.DocRef]int, len(refs))
	for _, r := range refs {
		next[r] = u.holds[r] + 1
		if len(refs) < absentMin && next[r] >= waveHoldTicks {
			released = append(released, r)
			u.released[r] = now
			delete(next, r)
		}
	}
	u.holds = next
	for r, at := range u.released {
		if now.Sub(at) > forget {
			delete(u.released, r)
		}
	}
	return released
}

// stillReleased notes that a released operation's 404 was seen again.
func (u *unconfirmed) stillReleased(ref store.DocRef, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.released[ref]; ok {
		u.released[ref] = now
	}
}
