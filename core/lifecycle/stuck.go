package lifecycle

import (
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
	if d := e.cfg.deadline(&job{op: p.op, kind: kind, res: res}); !d.IsZero() {
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
