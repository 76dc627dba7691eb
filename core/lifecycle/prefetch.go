package lifecycle

import (
	"context"
	"log/slog"
	"maps"
	"sync"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Batched polling. A tick reads the CS objects of a page of operations
// with list calls (clusters by an id search, node pools and external auths
// per parent cluster) before the page's operations run, and each job of
// the page gets what they said as its csReads. A job's poll still makes
// the same single-object reads it always made; csReads answers them from
// the page's lists where it can. So conversion, NeedToPatch, the writes
// and the notifications stay per operation and do not know about
// batching, and an object a list did not return (deleted, not yet
// created, listed without status) is read with its GET, so a 404 means
// what it meant.

// snapshot is what one page's list calls said, keyed by the href the
// operations will ask for. An object of a list call that failed is not in
// it, so its operation reads it with a GET of its own: a sick object in a
// batch then costs the healthy ones of that batch the list call's time
// and nothing more, and the sick one is backed off alone. That costs CS
// at most what polling cost before batching, and only for operations that
// were not already backed off.
type snapshot struct {
	clusters  map[string]cs.Cluster
	nodePools map[string]cs.NodePool
	auths     map[string]cs.ExternalAuth
}

// csReads is how a job reads the state of its CS objects: from its page's
// snapshot where that has the object, else with the object's GET. A job
// no page prepared (a dispatch, a backed-off retry) has no snapshot, and
// a dispatch's reads before it creates anything always go to CS.
type csReads struct {
	cs   cs.Client
	page *snapshot // nil: none
	// resourceID is the ARM resource of a cluster job, whose clusters
	// must name it (about.go); "" for other kinds.
	resourceID string
	calls      *cs.Recorder
}

// fromPage answers a read of the object at href from the page's list of
// its kind (pick), when that returned it, else with the object's GET.
func fromPage[T, V any](ctx context.Context, s *snapshot, pick func(*snapshot) map[string]T, href string,
	part func(T) V, get func(context.Context, string) (V, error)) (V, error) {
	if s != nil {
		if v, ok := pick(s)[href]; ok {
			return part(v), nil
		}
	}
	return get(ctx, href)
}

func (r csReads) cluster(ctx context.Context, href string) (cs.Cluster, error) {
	c, err := fromPage(ctx, r.page, clustersOf, href, whole[cs.Cluster], r.cs.GetCluster)
	if err == nil {
		err = r.sameResource(ctx, href, c)
	}
	return c, err
}

// clusterStatus answers from the status inline in a listed cluster: the
// same fields /status carries (state, description, provision error).
func (r csReads) clusterStatus(ctx context.Context, href string) (cs.ClusterStatus, error) {
	if r.page != nil {
		if c, ok := r.page.clusters[href]; ok {
			return c.Status, r.sameResource(ctx, href, c)
		}
	}
	return r.cs.GetClusterStatus(ctx, href)
}

func (r csReads) nodePool(ctx context.Context, href string) (cs.NodePool, error) {
	return fromPage(ctx, r.page, nodePoolsOf, href, whole[cs.NodePool], r.cs.GetNodePool)
}

func (r csReads) nodePoolStatus(ctx context.Context, href string) (cs.NodePoolStatus, error) {
	return fromPage(ctx, r.page, nodePoolsOf, href, func(np cs.NodePool) cs.NodePoolStatus { return np.Status }, r.cs.GetNodePoolStatus)
}

func (r csReads) externalAuth(ctx context.Context, href string) (cs.ExternalAuth, error) {
	return fromPage(ctx, r.page, authsOf, href, whole[cs.ExternalAuth], r.cs.GetExternalAuth)
}

func whole[T any](v T) T { return v }

func clustersOf(s *snapshot) map[string]cs.Cluster   { return s.clusters }
func nodePoolsOf(s *snapshot) map[string]cs.NodePool { return s.nodePools }
func authsOf(s *snapshot) map[string]cs.ExternalAuth { return s.auths }

// listCall is one batched read: up to the batch size of hrefs of one kind
// (and, for children, of one cluster).
type listCall struct {
	kind    cs.HrefKind
	cluster string // parent cluster href, for node pools and external auths
	hrefs   []string
}

// planLists groups hrefs into list calls of at most batch hrefs each.
// Hrefs that are no cluster, node pool or external auth are left to their
// GETs. Duplicates are read once.
func planLists(hrefs []string, batch int) []listCall {
	type group struct {
		kind    cs.HrefKind
		cluster string
	}
	var order []group
	members := map[group][]string{}
	seen := map[string]bool{}
	for _, h := range hrefs {
		kind, cluster := cs.ParseHref(h)
		if kind == cs.HrefOther || seen[h] {
			continue
		}
		seen[h] = true
		g := group{kind: kind}
		if kind != cs.HrefCluster {
			g.cluster = cluster
		}
		if _, ok := members[g]; !ok {
			order = append(order, g)
		}
		members[g] = append(members[g], h)
	}
	var calls []listCall
	for _, g := range order {
		m := members[g]
		for len(m) > 0 {
			n := min(batch, len(m))
			calls = append(calls, listCall{kind: g.kind, cluster: g.cluster, hrefs: m[:n:n]})
			m = m[n:]
		}
	}
	return calls
}

// prefetch runs the list calls for hrefs, at most conc at a time, and
// returns what they said. A failed call is logged once, with its size and
// the href it was about.
func prefetch(ctx context.Context, client cs.Client, log *slog.Logger, hrefs []string, batch, conc int) *snapshot {
	s := &snapshot{clusters: map[string]cs.Cluster{}, nodePools: map[string]cs.NodePool{},
		auths: map[string]cs.ExternalAuth{}}
	var mu sync.Mutex
	one := func(call listCall) {
		err := listOne(ctx, client, call, s, &mu)
		if err != nil && cs.Classify(err) != cs.Absent && ctx.Err() == nil {
			// A 404 is a list CS does not serve, or a parent cluster gone:
			// the GETs answer that as they always did, so it is no fault.
			log.WarnContext(ctx, "batched clusters service read failed; its objects are read one by one",
				append(cs.CallAttrs(err), "objects", len(call.hrefs), "error", err)...)
		}
	}
	calls := planLists(hrefs, batch)
	if len(calls) == 1 || conc <= 1 {
		// Calls that cannot overlap (a page's clusters are mostly one) are
		// made on this goroutine, whose stack has grown already, not on a
		// new one a page that grows its stack through the HTTP client's
		// depth (runtime.newstack and copystack showed in an unchanged
		// tick's profile: see
		// docs/decisions/active-set-view.md#goroutine-stacks). As in the
		// pool, none starts once ctx has ended: the transport would count
		// it as a failed CS request.
		for _, call := range calls {
			if ctx.Err() != nil {
				break
			}
			one(call)
		}
		return s
	}
	lists := newPool(ctx, conc)
	for _, call := range calls {
		lists.Go(func() { one(call) })
	}
	lists.Wait()
	return s
}

// listOne makes one list call and records its answers in s.
func listOne(ctx context.Context, client cs.Client, call listCall, s *snapshot, mu *sync.Mutex) error {
	switch call.kind {
	case cs.HrefCluster:
		return record(mu, &s.clusters)(client.ListClustersByHref(ctx, call.hrefs))
	case cs.HrefNodePool:
		return record(mu, &s.nodePools)(client.ListNodePoolsByHref(ctx, call.cluster, call.hrefs))
	case cs.HrefExternalAuth:
		return record(mu, &s.auths)(client.ListExternalAuthsByHref(ctx, call.cluster, call.hrefs))
	}
	return nil
}

// record puts what a list call answered into the snapshot's map of its
// kind, under mu; a failed call records nothing. The first answer of a
// kind becomes the map (the call's map is the caller's): a page's
// clusters are mostly one list, and copying it cost a hash and an insert
// per operation per tick, the map's growth besides.
func record[T any](mu *sync.Mutex, into *map[string]T) func(map[string]T, error) error {
	return func(got map[string]T, err error) error {
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(*into) == 0 && got != nil {
			*into = got
			return nil
		}
		maps.Copy(*into, got)
		return nil
	}
}
