package lifecycle

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// The signals alerts need to tell a stuck operation from a slow one. A
// tick sees every active operation anyway, so it counts them on the way
// (MsgActive, one record a tick) and notes each one whose age passes a
// threshold (MsgStuck, one record an operation and threshold, never one a
// tick). Neither costs a store or CS call.
const (
	// MsgActive: what one tick saw active, per (kind, request, status).
	MsgActive = "poll.active"
	// MsgStuck: an active operation's age passed one of its thresholds.
	MsgStuck = "operation.stuck"
)

// EnvStuckAfter overrides StuckAfter: comma-separated key=duration pairs,
// e.g. "cluster.create=30m,any=90m" (keys as StuckKey.String).
const EnvStuckAfter = "HCPOPS_STUCK_AFTER"

// StuckKey is a (kind, request) pair with a threshold of its own; the
// zero value is the backstop that covers every operation.
type StuckKey struct {
	Kind    document.Kind
	Request document.Request
}

// StuckAny is the backstop's key.
var StuckAny = StuckKey{}

// String is the key as HCPOPS_STUCK_AFTER spells it: "nodepool.update".
func (k StuckKey) String() string {
	if k == StuckAny {
		return "any"
	}
	return strings.ReplaceAll(k.Kind.String(), " ", "") + "." + strings.ToLower(string(k.Request))
}

// DefaultStuckAfter is ARO-HCP's stuck-operation alerting: each (kind,
// request) is stuck past its end-to-end test timeout, and every operation
// past an hour (the Prometheus rules of ARO-HCP's backend).
func DefaultStuckAfter() map[StuckKey]time.Duration {
	c, np, ea := document.KindCluster, document.KindNodePool, document.KindExternalAuth
	return map[StuckKey]time.Duration{
		{c, document.RequestCreate}:            20 * time.Minute, // ClusterCreationTimeout
		{c, document.RequestUpdate}:            45 * time.Minute, // HCPClusterVersionUpgradeTimeout
		{c, document.RequestDelete}:            25 * time.Minute, // HCPClusterDeletionTimeout
		{c, document.RequestRequestCredential}: 10 * time.Minute, // GetAdminRESTConfigTimeout
		{c, document.RequestRevokeCredentials}: 15 * time.Minute,
		{np, document.RequestCreate}:           20 * time.Minute, // NodePoolCreationTimeout
		{np, document.RequestUpdate}:           45 * time.Minute, // NodePoolVersionUpgradeTimeout
		{np, document.RequestDelete}:           25 * time.Minute, // NodePoolDeletionTimeout
		{ea, document.RequestCreate}:           15 * time.Minute, // ExternalAuthCreationTimeout
		{ea, document.RequestUpdate}:           10 * time.Minute,
		{ea, document.RequestDelete}:           15 * time.Minute, // ExternalAuthDeletionTimeout
		StuckAny:                               60 * time.Minute,
	}
}

// parseStuckAfter reads EnvStuckAfter's value over the defaults.
func parseStuckAfter(v string) (map[StuckKey]time.Duration, error) {
	out := DefaultStuckAfter()
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	byName := map[string]StuckKey{}
	for k := range out {
		byName[k.String()] = k
	}
	for entry := range strings.SplitSeq(v, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(entry), "=")
		key, known := byName[strings.ToLower(strings.TrimSpace(name))]
		if !ok || !known {
			names := slices.Sorted(maps.Keys(byName))
			return nil, fmt.Errorf("%s: entry %q: want key=duration with a key from %s", EnvStuckAfter, entry, strings.Join(names, ", "))
		}
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: entry %q: %q is not a positive duration such as 20m", EnvStuckAfter, entry, value)
		}
		out[key] = d
	}
	return out, nil
}

// stuckAfterEvery is where the thresholds of one operation stop doubling:
// from then on it crosses one a day. Alert rules read back at most two
// days, so an operation stuck for a week still has a record in range.
const stuckAfterEvery = 24 * time.Hour

// crossed is the highest threshold of an operation with threshold own
// (its kind and request's) and backstop any that age has passed: own,
// then any, 2·any, 4·any ... up to a day, then every day. Zero: none.
func crossed(own, any, age time.Duration) time.Duration {
	var best time.Duration
	if own > 0 && age >= own {
		best = own
	}
	if any <= 0 {
		return best
	}
	for t := any; t <= age && t <= stuckAfterEvery; t *= 2 {
		best = max(best, t)
	}
	if age >= stuckAfterEvery {
		best = max(best, age/stuckAfterEvery*stuckAfterEvery)
	}
	return best
}

// stuckWatch remembers which threshold each operation last crossed, so
// that a crossing is written once, not every tick. In memory on purpose,
// like the backoff schedules: a restart writes the current crossing once
// more, which the alert queries fold by resource. An entry not seen for
// stuckWatchForget is dropped, so the map holds only operations that are
// still active.
type stuckWatch struct {
	mu sync.Mutex
	m  map[store.DocRef]stuckSeen
}

type stuckSeen struct {
	threshold time.Duration
	seen      time.Time
}

const stuckWatchForget = time.Hour

func newStuckWatch() *stuckWatch { return &stuckWatch{m: map[store.DocRef]stuckSeen{}} }

// cross records that key is past threshold at now and reports whether
// that threshold is new for it.
func (w *stuckWatch) cross(key store.DocRef, threshold time.Duration, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := w.m[key]
	w.m[key] = stuckSeen{threshold: max(prev.threshold, threshold), seen: now}
	return threshold > prev.threshold
}

// sweep forgets the operations not seen since before now - stuckWatchForget.
func (w *stuckWatch) sweep(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	maps.DeleteFunc(w.m, func(_ store.DocRef, s stuckSeen) bool { return now.Sub(s.seen) > stuckWatchForget })
}

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

// logStuck writes MsgStuck: a warning, since an operation past its
// threshold is what an SRE is paged for, with what identifies its CS
// object when the page read its resource, and when the tick will fail it
// ("" for none).
func (e *Engine) logStuck(ctx context.Context, p *polled, kind document.Kind, age, own, threshold time.Duration) {
	csID := p.op.Properties.InternalID
	res := p.res // nil when the page did not read it
	if csID == "" && res != nil {
		csID = res.ClusterServiceID()
	}
	deadline := ""
	if d := e.deadlineOf(p.op, res); !d.IsZero() {
		deadline = d.UTC().Format(time.RFC3339)
	}
	e.logFor(p.op).LogAttrs(ctx, slog.LevelWarn, MsgStuck,
		slog.String("kind", kind.String()),
		slog.String("status", string(p.op.Properties.Status)),
		slog.Float64("seconds_since_start", age.Seconds()),
		slog.Float64("threshold_seconds", threshold.Seconds()),
		slog.Float64("stuck_after_seconds", own.Seconds()),
		slog.String("cluster_service_id", csID),
		slog.String("deadline", deadline))
}
