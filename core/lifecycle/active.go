package lifecycle

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// The tick's MsgActive record: what it saw active, counted as its pages
// stream by (stuck.go has the thresholds each operation is judged by).

// activeGroup is one (kind, request, status) of a tick's active operations.
type activeGroup struct {
	kind    document.Kind
	request document.Request
	status  string
	count   int
	stuck   int // past the threshold of their (kind, request)
	oldest  *document.OperationDocument
}

// activeTally counts one tick's active operations as its pages stream by;
// page preparers share it.
type activeTally struct {
	e   *Engine
	now time.Time

	mu     sync.Mutex
	groups map[activeKey]*activeGroup
}

type activeKey struct {
	kind    document.Kind
	request document.Request
	status  string
}

func (e *Engine) newActiveTally(now time.Time) *activeTally {
	return &activeTally{e: e, now: now, groups: map[activeKey]*activeGroup{}}
}

// page counts a prepared page's active operations and writes MsgStuck for
// each that crossed a threshold since it was last seen. It counts the page
// apart and merges once, so page preparers seldom wait on each other.
func (a *activeTally) page(ctx context.Context, ps []polled) {
	local := map[activeKey]*activeGroup{}
	anyAfter := a.e.cfg.StuckAfter[StuckAny]
	// A page's operations mostly share their group: the last one's group
	// and threshold are kept, which spares two map lookups an operation.
	var (
		last activeKey
		g    *activeGroup
		own  time.Duration
	)
	for i := range ps {
		p := &ps[i]
		op := p.op
		if op == nil || op.Properties.Status.IsTerminal() {
			continue
		}
		kind, _ := op.TargetKind() // KindOther for one newJob will refuse
		age := a.now.Sub(op.Properties.StartTime)
		if op.Properties.StartTime.IsZero() {
			age = 0
		}
		if k := (activeKey{kind, op.Properties.Request, string(op.Properties.Status)}); g == nil || k != last {
			own = a.e.cfg.StuckAfter[StuckKey{kind, op.Properties.Request}]
			if g = local[k]; g == nil {
				g = &activeGroup{kind: kind, request: op.Properties.Request, status: k.status}
				local[k] = g
			}
			last = k
		}
		g.add(op, own > 0 && age >= own)
		if t := crossed(own, anyAfter, age); t > 0 && a.e.stuck.cross(docRef(op), t, a.now) {
			a.e.logStuck(ctx, p, kind, age, own, t)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, g := range local {
		if all := a.groups[k]; all != nil {
			all.merge(g)
		} else {
			a.groups[k] = g
		}
	}
}

func (g *activeGroup) add(op *document.OperationDocument, stuck bool) {
	g.merge(&activeGroup{count: 1, stuck: b2i(stuck), oldest: op})
}

func (g *activeGroup) merge(o *activeGroup) {
	g.count += o.count
	g.stuck += o.stuck
	if g.oldest == nil || o.oldest.Properties.StartTime.Before(g.oldest.Properties.StartTime) {
		g.oldest = o.oldest
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// report writes MsgActive. complete is false when the tick stopped before
// the end of the stream (its budget ran out, the store failed): the counts
// are then a lower bound. A tick that saw nothing active still writes one,
// so a dashboard shows zero rather than a gap.
func (a *activeTally) report(ctx context.Context, complete bool) {
	a.mu.Lock()
	groups := slices.Collect(maps.Values(a.groups))
	a.mu.Unlock()
	slices.SortFunc(groups, func(x, y *activeGroup) int {
		return cmp.Or(cmp.Compare(x.kind, y.kind), cmp.Compare(x.request, y.request), cmp.Compare(x.status, y.status))
	})
	total := 0
	list := make([]any, 0, len(groups))
	for _, g := range groups {
		total += g.count
		list = append(list, map[string]any{
			"kind":                g.kind.String(),
			"request":             string(g.request),
			"status":              g.status,
			"count":               g.count,
			"stuck":               g.stuck,
			"oldest_seconds":      a.ageSeconds(g.oldest),
			"oldest_operation_id": g.oldest.Name(),
			"oldest_resource_id":  g.oldest.Properties.ExternalID,
		})
	}
	a.e.stuck.sweep(a.now)
	a.e.log.LogAttrs(ctx, slog.LevelInfo, MsgActive,
		slog.Int("active", total),
		slog.Bool("complete", complete),
		slog.Any("groups", list))
}

func (a *activeTally) ageSeconds(op *document.OperationDocument) float64 {
	if op.Properties.StartTime.IsZero() {
		return 0
	}
	return a.now.Sub(op.Properties.StartTime).Seconds()
}
