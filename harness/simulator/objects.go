package simulator

import (
	"fmt"
	"sort"
	"strings"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// cluster is one simulated CS cluster and everything under it; children are
// only reachable through their cluster, so they vanish with it.
type cluster struct {
	id          string
	seq         int
	spec        *arohcp.Cluster // as posted and patched, without state
	created     time.Time
	tl          timeline
	failure     *ClusterFailure
	checks      []inflightCheck
	checksEnded time.Time

	nodePools     map[string]*nodePool
	externalAuths map[string]*externalAuth
	creds         map[string]*credential

	// upgrades are its control plane upgrade policies, oldest first;
	// upgradeFailure fails the next one (upgrades.go).
	upgrades       []*upgradePolicy
	upgradeFailure *UpgradeFailure
}

type inflightCheck struct {
	id, name, err string
}

type nodePool struct {
	id      string
	seq     int
	spec    *arohcp.NodePool
	tl      timeline
	message string

	// upgrades are its upgrade policies, oldest first; upgradeFailure
	// fails the next one (upgrades.go).
	upgrades       []*upgradePolicy
	upgradeFailure *UpgradeFailure
}

type externalAuth struct {
	id      string
	seq     int
	spec    *arohcp.ExternalAuth
	tl      timeline
	message string
}

type credential struct {
	id        string
	seq       int
	username  string
	token     string // the secret in its kubeconfig
	created   time.Time
	expires   time.Time
	tl        timeline
	revokedAt time.Time
}

// apiError is a CS error response chosen inside a handler.
type apiError struct {
	status int
	reason string
}

func (e *apiError) Error() string { return e.reason }

func errf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, reason: fmt.Sprintf(format, args...)}
}

// locked runs fn with the state lock held and the simulated time.
func (s *Simulator) locked(fn func(now time.Time) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(s.now())
}

// nextSeq orders objects by creation for stable list pages. Callers hold mu.
func (s *Simulator) nextSeq() int {
	s.seq++
	return s.seq
}

// liveCluster returns the cluster unless it is unknown or its deletion has
// finished (then it is dropped with its children).
func (s *Simulator) liveCluster(id string, now time.Time) *cluster {
	c := s.clusters[id]
	if c == nil {
		return nil
	}
	if st, _ := c.tl.at(now); st == "" {
		delete(s.clusters, id)
		return nil
	}
	return c
}

// mustCluster is liveCluster with the CS 404.
func (s *Simulator) mustCluster(id string, now time.Time) (*cluster, error) {
	c := s.liveCluster(id, now)
	if c == nil {
		return nil, errf(404, "Cluster '%s' not found", id)
	}
	return c, nil
}

// clustersByID returns the live clusters among ids in creation order.
func (s *Simulator) clustersByID(ids []string, now time.Time) []*cluster {
	var out []*cluster
	for _, id := range ids {
		if c := s.liveCluster(id, now); c != nil {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// liveClusters lists live clusters in creation order.
func (s *Simulator) liveClusters(now time.Time) []*cluster {
	var out []*cluster
	for id := range s.clusters {
		if c := s.liveCluster(id, now); c != nil {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

func (c *cluster) state(now time.Time) string {
	st, _ := c.tl.at(now)
	return st
}

// acceptsChanges reports whether CS lets callers change the cluster or its
// children now (ready or updating), with the state for the refusal.
func (c *cluster) acceptsChanges(now time.Time) (string, bool) {
	st := c.state(now)
	return st, st == cs.ClusterStateReady || st == cs.ClusterStateUpdating
}

func (c *cluster) href() string { return cs.ClusterHref(c.id) }

// matchesKey lets scenario controls name a cluster by CS ID, CS name or ARM
// resource name, since a test often knows only the latter.
func (c *cluster) matchesKey(key string) bool {
	return key != "" && (c.id == key || strings.EqualFold(c.spec.Name(), key) ||
		strings.EqualFold(c.spec.Azure().ResourceName(), key))
}

func (c *cluster) liveNodePool(id string, now time.Time) *nodePool {
	np := c.nodePools[id]
	if np == nil {
		return nil
	}
	if st, _ := np.tl.at(now); st == "" {
		delete(c.nodePools, id)
		return nil
	}
	return np
}

// liveNodePools lists the live node pools in creation order.
func (c *cluster) liveNodePools(now time.Time) []*nodePool {
	var out []*nodePool
	for id := range c.nodePools {
		if np := c.liveNodePool(id, now); np != nil {
			out = append(out, np)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

func (c *cluster) liveExternalAuth(id string, now time.Time) *externalAuth {
	ea := c.externalAuths[id]
	if ea == nil {
		return nil
	}
	if st, _ := ea.tl.at(now); st == "" {
		delete(c.externalAuths, id)
		return nil
	}
	return ea
}

// liveExternalAuths lists the live external auths in creation order.
func (c *cluster) liveExternalAuths(now time.Time) []*externalAuth {
	var out []*externalAuth
	for id := range c.externalAuths {
		if ea := c.liveExternalAuth(id, now); ea != nil {
			out = append(out, ea)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// credentials lists every credential, revoked and expired ones included,
// in creation order.
func (c *cluster) credentials() []*credential {
	out := make([]*credential, 0, len(c.creds))
	for _, cr := range c.creds {
		out = append(out, cr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// checkID refuses an ID CS would: node pool and external auth IDs (lower-
// cased ARM names), and loosely caller-chosen cluster IDs.
func checkID(kind, id string) error {
	if !cs.ValidChildID(id) {
		return errf(400, "%s identifier '%s' is invalid: it must be 1-63 lower-case letters, digits or dashes, "+
			"starting and ending with a letter or digit", kind, id)
	}
	return nil
}
