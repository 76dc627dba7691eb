package activeset

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Rebuild is a full read in progress: the caller streams the
// active-operations query and reads their resources as a tick always did,
// and records what it read here; Commit then makes it the view. Safe for
// concurrent use (a tick prepares several pages at once).
type Rebuild struct {
	v     *View
	pos   string
	began time.Time

	mu  sync.Mutex
	set *set
}

// Begin starts a rebuild and drops what the view held. Its place in the
// change feed is taken first, so a change made while the caller reads
// arrives with the next Refresh: nothing written after Begin is missed,
// and what comes twice is told apart by version.
func (v *View) Begin(ctx context.Context) (*Rebuild, error) {
	v.mu.Lock()
	v.drop()
	v.mu.Unlock()
	began := v.cfg.Clock.Now()
	pos, err := v.feed.Begin(ctx, changefeed.FromNow())
	if err != nil {
		return nil, fmt.Errorf("starting the active-set view: %w", err)
	}
	s := newSet()
	s.building = true
	return &Rebuild{v: v, pos: pos, began: began, set: s}, nil
}

// Operations records a page of the active-operations query. The query
// selected them, so each is held even where the view's own reading of
// the query would differ; it then counts as active. parsed, when not nil,
// is items parsed, in order: nothing is parsed twice.
func (r *Rebuild) Operations(items []store.Item, parsed []Op) {
	type op struct {
		h     head
		rec   []byte
		ref   store.DocRef
		needs bool
	}
	ops := make([]op, 0, len(items))
	for i, it := range items {
		var doc *document.OperationDocument
		if i < len(parsed) {
			doc = parsed[i].Doc
		}
		h, err := headOf(doc), error(nil)
		if doc == nil {
			h, err = r.set.heads.read(it.Body)
		}
		if err != nil || h.id == "" || h.partitionKey == "" {
			continue // the tick reports what is wrong with it, every time
		}
		c := h.class()
		if c == classNone {
			c = classActive
		}
		ref, needs := resourceFor(r.v.cfg.ResourceOf, h, c)
		ops = append(ops, op{h: h, rec: operationRecord(r.set, h, it.Body, doc, opFlags(c)), ref: ref, needs: needs})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range ops {
		r.set.putOperation(o.h, o.rec, o.ref, o.needs)
	}
}

// headOf is what readHead reads of an operation, taken from it parsed
// (a first tick parses every operation anyway). Where the two could
// differ (a deletionTimestamp of null, which ParseOperation reads as
// none) the query has already selected the operation, which Operations
// holds whatever its head says.
func headOf(d *document.OperationDocument) head {
	if d == nil {
		return head{}
	}
	p := &d.Properties
	return head{id: d.ID, partitionKey: d.PartitionKey, etag: d.ETag, ts: d.Timestamp, ttl: int64(d.TTL),
		version: p.CosmosMetadata.InstanceVersion, deleted: d.DeletionTimestamp != nil, operation: true,
		resourceID: d.ResourceID != "", terminal: p.Status.IsTerminal(), notifyURI: p.NotificationURI != "",
		externalID: p.ExternalID}
}

// Resources records a read of refs: got holds the documents found, and a
// ref not in it is gone; parsed (which may be nil) what of got the caller
// parsed.
func (r *Rebuild) Resources(refs []store.DocRef, got map[store.DocRef]store.Item, parsed map[store.DocRef]Res) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v.record(r.set, refs, got, parsed)
}

// Commit makes what was recorded the view, to be refreshed from the
// change feed from where Begin found it. A rebuild the caller could not
// finish (its query failed or was cut short) must not be committed.
func (r *Rebuild) Commit() Stats {
	r.mu.Lock()
	s := r.set
	s.seal()
	r.mu.Unlock()
	v := r.v
	v.mu.Lock()
	defer v.mu.Unlock()
	v.drop()
	v.set, v.pos = s, r.pos
	v.nextRelist = r.began.Add(v.cfg.Relist + v.cfg.Jitter(v.cfg.Relist))
	// Not ticked again by its relist time (the timer moved to another
	// instance), the view is of no use: free it.
	v.stopFree = v.cfg.AfterFunc(v.nextRelist.Sub(v.cfg.Clock.Now()), func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.set == s {
			v.drop()
			v.cfg.Logger.Debug("active-set view freed: no tick since its relist time")
		}
	})
	return s.stats()
}

// drop forgets what the view holds; v.mu is held.
func (v *View) drop() {
	v.set = nil
	if v.stopFree != nil {
		v.stopFree()
		v.stopFree = nil
	}
}

// NextRelist is when the view will next be rebuilt; zero before the first
// build.
func (v *View) NextRelist() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set == nil {
		return time.Time{}
	}
	return v.nextRelist
}
