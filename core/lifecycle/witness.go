package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Witnesses (canaries) are objects the store says are live and not being
// deleted: their resource has its CS id and neither deletionTimestamp nor
// clusterServiceDeletionTimestamp. CS must answer right about them for its
// 404 about a delete's object to count (absence.go). They are looked up
// only in a tick that has a 404 to judge, from the store's existing
// Children query: for a cluster, the clusters of its subscription; for a
// node pool or external auth, its siblings under the same cluster. The
// unchanged tick looks up nothing.

// maxWitnesses is how many witnesses of one group a tick reads.
const maxWitnesses = 3

// witnessTTL is how long a group's witnesses are kept before the store is
// asked again; a witness CS answers wrong about is forgotten at once, so
// a deleted one costs one tick.
const witnessTTL = 5 * time.Minute

// witnessPages bounds the Children pages one lookup reads: a subscription
// with thousands of documents must not make a tick with a 404 scan them.
const witnessPages = 2

// witness is one live CS object vouched for by the store.
type witness struct {
	href       string
	resourceID string
}

// witnessScope is where a group's witnesses are looked up: the partition
// and the resource ID under which the store lists them.
type witnessScope struct {
	pk, parent string
	kind       document.Kind
}

type witnessEntry struct {
	at   time.Time
	list []witness
}

// witnesses caches the store's answer per scope. Its size is bounded by
// the scopes with deletes in flight, pruned once stale.
type witnesses struct {
	mu    sync.Mutex
	byKey map[witnessScope]witnessEntry
	// mute are the witnesses CS gave no word about (a hang, a body not
	// its own), by href, until when they are not asked again: one sick
	// object must not hold every delete of its kind.
	mute map[string]time.Time
}

func newWitnesses() *witnesses {
	return &witnesses{byKey: map[witnessScope]witnessEntry{}, mute: map[string]time.Time{}}
}

// silent notes a witness CS gave no word about: others are read instead
// until witnessTTL has passed.
func (w *witnesses) silent(href string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mute[href] = now.Add(witnessTTL)
}

// muted reports whether href is not to be read as a witness now.
// Callers hold mu.
func (w *witnesses) muted(href string, now time.Time) bool {
	until, ok := w.mute[href]
	if ok && !now.Before(until) {
		delete(w.mute, href)
		return false
	}
	return ok
}

// forget drops a scope's witnesses (one answered wrong: it may be gone).
func (w *witnesses) forget(s witnessScope) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKey, s)
}

var errEnoughWitnesses = errors.New("enough witnesses")

// witnessesOf is up to maxWitnesses live objects of scope's kind under its
// parent, none of them in exclude; from the cache when fresh.
func (e *Engine) witnessesOf(ctx context.Context, s witnessScope, exclude map[string]bool) ([]witness, error) {
	now := e.clock()
	e.witness.mu.Lock()
	got, ok := e.witness.byKey[s]
	for k, v := range e.witness.byKey {
		if now.Sub(v.at) > witnessTTL {
			delete(e.witness.byKey, k)
		}
	}
	e.witness.mu.Unlock()
	if !ok || now.Sub(got.at) > witnessTTL {
		list, err := e.lookUpWitnesses(ctx, s)
		if err != nil {
			return nil, err
		}
		got = witnessEntry{at: now, list: list}
		e.witness.mu.Lock()
		e.witness.byKey[s] = got
		e.witness.mu.Unlock()
	}
	out := make([]witness, 0, maxWitnesses)
	e.witness.mu.Lock()
	for _, w := range got.list {
		if !exclude[w.href] && !e.witness.muted(w.href, now) && len(out) < maxWitnesses {
			out = append(out, w)
		}
	}
	e.witness.mu.Unlock()
	return e.stillLive(ctx, s.pk, out)
}

// stillLive keeps the witnesses the store still says are live: one read
// of at most maxWitnesses documents, so a witness deleted since the cache
// was filled is not mistaken for CS answering wrong about it.
func (e *Engine) stillLive(ctx context.Context, pk string, ws []witness) ([]witness, error) {
	if len(ws) == 0 {
		return ws, nil
	}
	refs := make([]store.DocRef, len(ws))
	for i, w := range ws {
		refs[i] = store.DocRef{PartitionKey: pk, ID: document.CosmosID(w.resourceID)}
	}
	got, err := e.store.ReadMany(ctx, refs)
	if err != nil {
		return nil, err
	}
	live := ws[:0]
	for i, w := range ws {
		it, ok := got[refs[i]]
		if !ok {
			continue
		}
		if r, err := document.ParseResource(it.Body); err == nil && liveInClusterService(r) && r.ClusterServiceID() == w.href {
			live = append(live, w)
		}
	}
	return live, nil
}

// lookUpWitnesses reads at most witnessPages of the store's documents
// under s.parent for live objects of s.kind; created ones first. It reads
// a few more than maxWitnesses so that a candidate among them leaves
// enough.
func (e *Engine) lookUpWitnesses(ctx context.Context, s witnessScope) ([]witness, error) {
	var found, later []witness
	pages := 0
	err := e.store.Children(ctx, s.pk, s.parent, func(items []store.Item) error {
		for _, it := range items {
			var d childDoc
			if json.Unmarshal(it.Body, &d) != nil {
				continue
			}
			if k, err := document.ResourceKind(d.ResourceType); err != nil || k != s.kind {
				continue
			}
			r, err := document.ParseResource(it.Body)
			if err != nil || !liveInClusterService(r) {
				continue
			}
			w := witness{href: r.ClusterServiceID(), resourceID: r.ResourceID()}
			if r.ProvisioningState() == "Succeeded" {
				found = append(found, w)
			} else {
				later = append(later, w)
			}
		}
		if pages++; len(found) >= 2*maxWitnesses || pages >= witnessPages {
			return errEnoughWitnesses
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnoughWitnesses) {
		return nil, err
	}
	found = append(found, later...)
	return found[:min(len(found), 2*maxWitnesses)], nil
}

// liveInClusterService: the store says CS has r and nobody asked to
// delete it.
func liveInClusterService(r *document.Resource) bool {
	if r.ClusterServiceID() == "" {
		return false
	}
	_, marked := r.DeletionTimestamp()
	_, sent := r.ClusterServiceDeletionTimestamp()
	return !marked && !sent
}

// scopeOf is where the witnesses of a candidate delete are looked up: the
// clusters of its subscription, or its siblings under its cluster.
func scopeOf(j *job, href string) (witnessScope, bool) {
	if j.res == nil {
		return witnessScope{}, false
	}
	switch kind, _ := cs.ParseHref(href); kind {
	case cs.HrefCluster:
		sub := document.SubscriptionOf(j.res.ResourceID())
		return witnessScope{pk: j.op.PartitionKey, parent: document.SubscriptionResourceID(sub), kind: document.KindCluster}, sub != ""
	case cs.HrefNodePool, cs.HrefExternalAuth:
		parent, err := document.ParentClusterID(j.res.ResourceID())
		return witnessScope{pk: j.op.PartitionKey, parent: parent, kind: j.kind}, err == nil
	}
	return witnessScope{}, false
}

// sortedHrefs is the hrefs of ws, for logs.
func sortedHrefs(ws []witness) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.href
	}
	slices.Sort(out)
	return out
}
