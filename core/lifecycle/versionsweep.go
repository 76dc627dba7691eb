package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/changefeed"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// versionSweep keeps the versions in every live cluster's and node
// pool's service-provider document current, not only those of resources
// an update just completed on: a cluster created before hcpops wrote them
// would otherwise have its node pools' version changes refused by the
// frontend ("lowest control plane version is not known"), and a cluster
// with no channel list lets the frontend admit a version nothing can
// reach. Each tick reads one page of the container's change feed: a full
// pass from its beginning (every live document) each interval, and
// between passes the documents written since — a new cluster is seen on
// the first tick after it is written. For the clusters and node pools in
// the page it asks CS in lists (their objects, and the versions it
// offers) and writes what changed (recordVersions: etag-guarded, every
// other member kept). A CS or store failure leaves the page to the next
// tick; a document that cannot be read is logged and passed over.
type versionSweep struct {
	store store.Store
	cs    cs.Client
	feed  *changefeed.Reader
	log   *slog.Logger
	every time.Duration
	batch int

	mu       sync.Mutex
	versions []cs.Version // CS's, read at readAt
	readAt   time.Time
	begun    bool
	caughtUp bool
	pos      string
	started  time.Time
}

func newVersionSweep(st store.Store, c cs.Client, log *slog.Logger, every time.Duration, pageSize, batch int) *versionSweep {
	return &versionSweep{store: st, cs: c, log: log, every: every, batch: batch,
		feed: changefeed.NewReader(st, changefeed.WithPageSize(pageSize))}
}

// run sweeps one page; written is how many documents it wrote. A sweep
// still running (a tick that overran) is not joined.
func (s *versionSweep) run(ctx context.Context, now time.Time) (written int, err error) {
	if !s.mu.TryLock() {
		return 0, nil
	}
	defer s.mu.Unlock()
	if !s.begun || s.caughtUp && now.Sub(s.started) >= s.every {
		s.begun, s.caughtUp, s.pos, s.started = true, false, "", now
	}
	page, err := s.feed.Read(ctx, s.pos)
	if errors.Is(err, changefeed.ErrGap) {
		s.begun = false // a full pass next tick
	}
	if err != nil {
		return 0, fmt.Errorf("version sweep: %w", err)
	}
	if len(page.Changes) == 0 {
		s.caughtUp, s.pos = true, page.Next
		return 0, nil
	}
	written, err = s.record(ctx, page.Changes, now)
	if err != nil {
		return written, fmt.Errorf("version sweep: %w", err)
	}
	s.pos = page.Next
	return written, nil
}

// record writes the versions of the live clusters and node pools among
// items.
func (s *versionSweep) record(ctx context.Context, items []store.Item, now time.Time) (int, error) {
	var clusters []*document.Resource
	pools := map[string][]*document.Resource{} // by their cluster's href
	for _, it := range items {
		res := s.resource(ctx, it)
		if res == nil {
			continue
		}
		if res.Kind == document.KindCluster {
			clusters = append(clusters, res)
		} else if kind, clusterHref := cs.ParseHref(res.ClusterServiceID()); kind == cs.HrefNodePool {
			pools[clusterHref] = append(pools[clusterHref], res)
		}
	}
	written := 0
	if len(clusters) > 0 {
		versions, err := s.csVersions(ctx, now)
		if err != nil {
			return written, err
		}
		for chunk := range chunks(clusters, s.batch) {
			live, err := s.cs.ListClustersByHref(ctx, csIDs(chunk))
			if err != nil {
				return written, fmt.Errorf("reading %d clusters: %w", len(chunk), err)
			}
			for _, res := range chunk {
				c, ok := live[res.ClusterServiceID()]
				if !ok { // not in CS's list: nothing to say about it
					continue
				}
				n, err := s.write(ctx, res, spVersions{active: c.Version, channels: desiredVersionChannels(c.Version, versions)})
				if written += n; err != nil {
					return written, err
				}
			}
		}
	}
	for clusterHref, group := range pools {
		for chunk := range chunks(group, s.batch) {
			live, err := s.cs.ListNodePoolsByHref(ctx, clusterHref, csIDs(chunk))
			if err != nil {
				return written, fmt.Errorf("reading %d node pools of %s: %w", len(chunk), clusterHref, err)
			}
			for _, res := range chunk {
				if np, ok := live[res.ClusterServiceID()]; ok {
					n, err := s.write(ctx, res, spVersions{active: np.Version})
					if written += n; err != nil {
						return written, err
					}
				}
			}
		}
	}
	return written, nil
}

// versionsFresh is how long the versions CS offers are used before they
// are read again: a pass over a large container spans many ticks, and the
// list is the same for all of them.
const versionsFresh = time.Minute

// csVersions is every version CS offers, read at most once a minute.
func (s *versionSweep) csVersions(ctx context.Context, now time.Time) ([]cs.Version, error) {
	if s.versions != nil && now.Sub(s.readAt) < versionsFresh {
		return s.versions, nil
	}
	vs, err := s.cs.ListVersions(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("reading Clusters Service's versions: %w", err)
	}
	s.versions, s.readAt = vs, now
	return vs, nil
}

// resource is the live cluster or node pool it holds, with a CS object;
// nil for anything else. One that does not parse is logged and passed
// over: the sweep cannot mend it.
func (s *versionSweep) resource(ctx context.Context, it store.Item) *document.Resource {
	var env struct {
		ResourceType string `json:"resourceType"`
	}
	if json.Unmarshal(it.Body, &env) != nil {
		return nil
	}
	kind, err := document.ResourceKind(env.ResourceType)
	if err != nil || kind != document.KindCluster && kind != document.KindNodePool {
		return nil
	}
	res, err := document.ParseResource(it.Body)
	if err != nil {
		s.log.WarnContext(ctx, "version sweep: resource document passed over", "error", err)
		return nil
	}
	if _, deleting := res.DeletionTimestamp(); deleting || res.ClusterServiceID() == "" {
		return nil
	}
	return res
}

// write records v for res; a damaged service-provider document is
// logged and passed over, a lost race or a store failure fails the page.
func (s *versionSweep) write(ctx context.Context, res *document.Resource, v spVersions) (int, error) {
	// The page may be older than the store: a resource deleted since must
	// not get its service-provider document back.
	item, err := s.store.Get(ctx, res.PartitionKey(), res.ID())
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s again: %w", res.ResourceID(), err)
	}
	if now := s.resource(ctx, item); now == nil || now.ClusterServiceID() != res.ClusterServiceID() {
		return 0, nil
	}
	written, err := recordVersions(ctx, s.store, res, v)
	if errors.Is(err, errMalformed) {
		s.log.WarnContext(ctx, "version sweep: service-provider document passed over", "resource_id", res.ResourceID(), "error", err)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recording the versions of %s: %w", res.ResourceID(), err)
	}
	if written {
		s.log.InfoContext(ctx, "service-provider versions recorded", "resource_id", res.ResourceID(),
			"active_version", v.active, "desired_version_channels", v.channels)
		return 1, nil
	}
	return 0, nil
}

func csIDs(rs []*document.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ClusterServiceID()
	}
	return out
}

// chunks yields rs in slices of at most n.
func chunks(rs []*document.Resource, n int) func(func([]*document.Resource) bool) {
	return func(yield func([]*document.Resource) bool) {
		for len(rs) > 0 {
			k := min(n, len(rs))
			if !yield(rs[:k]) {
				return
			}
			rs = rs[k:]
		}
	}
}
