package simulator

import (
	"fmt"
	"strings"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// ClusterFailure makes a cluster end in state "error" where its
// installation would begin (or at once, if it is already past that point).
type ClusterFailure struct {
	Code    string `json:"code"`    // provision_error_code, e.g. "OCM3055" or "OCM4001"
	Message string `json:"message"` // provision_error_message
	// FailedChecks is how many inflight checks fail under OCM4001;
	// CheckErrors, when given, sets their details.error texts instead.
	FailedChecks int      `json:"failed_checks"`
	CheckErrors  []string `json:"check_errors"`
}

// Real CS texts for an inflight-check failure.
const (
	inflightMessage     = "Inflight checks failed. Get 'inflight_checks' endpoint for details."
	inflightDescription = "Inflight checks failed. Check inflight checks API for details"
)

func (f ClusterFailure) normalize() (ClusterFailure, error) {
	if f.FailedChecks < 0 {
		return f, fmt.Errorf("cluster failure: failed_checks %d is negative", f.FailedChecks)
	}
	if len(f.CheckErrors) > 0 {
		f.FailedChecks = len(f.CheckErrors)
	}
	if f.Code != cs.ProvisionErrorInflightChecks {
		if f.FailedChecks > 0 {
			return f, fmt.Errorf("cluster failure: failed_checks needs code %s, got %q",
				cs.ProvisionErrorInflightChecks, f.Code)
		}
		return f, nil
	}
	if f.Message == "" {
		f.Message = inflightMessage
	}
	if f.FailedChecks == 0 {
		f.FailedChecks = 1
	}
	for i := len(f.CheckErrors); i < f.FailedChecks; i++ {
		f.CheckErrors = append(f.CheckErrors, fmt.Sprintf("simulated inflight check failure %d", i+1))
	}
	return f, nil
}

// NodePoolFailure makes a node pool end in State ("error" or
// "recoverable_error") with Message.
type NodePoolFailure struct {
	State   string `json:"state"`
	Message string `json:"message"`
}

// ExternalAuthFailure makes an external auth go to "error" with Message.
type ExternalAuthFailure struct {
	Message string `json:"message"`
}

// armedFailures wait for objects that do not exist yet; each fires once.
type armedFailures struct {
	clusters      map[string]ClusterFailure      // cluster key
	nodePools     map[string]NodePoolFailure     // cluster key + "/" + node pool ID
	externalAuths map[string]ExternalAuthFailure // cluster key + "/" + external auth ID
}

// childKey is the armedFailures key of child id under the clusters
// clusterKey names.
func childKey(clusterKey, id string) string { return strings.ToLower(clusterKey) + "/" + id }

// takeArmedChild consumes a failure armed for child id of c. Callers hold
// mu.
func takeArmedChild[F any](armed map[string]F, c *cluster, id string) (F, bool) {
	for key, f := range armed {
		ck, childID, _ := strings.Cut(key, "/")
		if childID == id && c.matchesKey(ck) {
			delete(armed, key)
			return f, true
		}
	}
	var zero F
	return zero, false
}

func newArmedFailures() armedFailures {
	return armedFailures{
		clusters:      map[string]ClusterFailure{},
		nodePools:     map[string]NodePoolFailure{},
		externalAuths: map[string]ExternalAuthFailure{},
	}
}

// FailCluster fails the clusters that key names (CS ID, CS name or ARM
// resource name); when none exists yet, the failure waits for the next
// cluster created with that key. It reports whether it applied at once.
func (s *Simulator) FailCluster(key string, f ClusterFailure) (bool, error) {
	if key == "" {
		return false, fmt.Errorf("cluster failure: empty cluster key")
	}
	f, err := f.normalize()
	if err != nil {
		return false, err
	}
	applied := false
	err = s.locked(func(now time.Time) error {
		for _, c := range s.liveClusters(now) {
			// One that failed already (an earlier run's, kept by
			// persist.go) is left alone: the failure waits for the next.
			if c.matchesKey(key) && c.state(now) != cs.ClusterStateError {
				if err := s.applyClusterFailure(c, f, now); err != nil {
					return err
				}
				applied = true
			}
		}
		if !applied {
			s.armed.clusters[strings.ToLower(key)] = f
		}
		return nil
	})
	return applied, err
}

// applyClusterFailure: callers hold mu.
func (s *Simulator) applyClusterFailure(c *cluster, f ClusterFailure, now time.Time) error {
	switch st := c.state(now); st {
	case cs.ClusterStateUninstalling:
		return fmt.Errorf("cluster %s is uninstalling", c.id)
	case cs.ClusterStateValidating, cs.ClusterStatePending:
		c.tl = c.tl.failBefore(cs.ClusterStateError, cs.ClusterStateInstalling)
		c.checksEnded = c.tl.end()
	default:
		c.tl = settled(now, cs.ClusterStateError)
		c.checksEnded = now
	}
	c.failure = &f
	for _, msg := range f.CheckErrors {
		c.checks = append(c.checks, inflightCheck{
			id:   s.newUUID(),
			name: fmt.Sprintf("simulated-check-%d", len(c.checks)),
			err:  msg,
		})
	}
	return nil
}

// takeArmedCluster consumes a failure armed for c. Callers hold mu.
func (s *Simulator) takeArmedCluster(c *cluster) (ClusterFailure, bool) {
	for key, f := range s.armed.clusters {
		if c.matchesKey(key) {
			delete(s.armed.clusters, key)
			return f, true
		}
	}
	return ClusterFailure{}, false
}

// FailNodePool fails node pool id of the clusters clusterKey names, now or
// (when it does not exist yet) once it is created.
func (s *Simulator) FailNodePool(clusterKey, id string, f NodePoolFailure) (bool, error) {
	if f.State == "" {
		f.State = cs.NodePoolStateError
	}
	if f.State != cs.NodePoolStateError && f.State != cs.NodePoolStateRecoverableError {
		return false, fmt.Errorf("node pool failure: state %q is neither %q nor %q",
			f.State, cs.NodePoolStateError, cs.NodePoolStateRecoverableError)
	}
	if clusterKey == "" || id == "" {
		return false, fmt.Errorf("node pool failure: cluster key %q and node pool id %q must not be empty", clusterKey, id)
	}
	applied := false
	err := s.locked(func(now time.Time) error {
		for _, c := range s.liveClusters(now) {
			if np := c.liveNodePool(id, now); np != nil && c.matchesKey(clusterKey) && !nodePoolFailed(np, now) {
				if err := applyNodePoolFailure(np, f, now); err != nil {
					return err
				}
				applied = true
			}
		}
		if !applied {
			s.armed.nodePools[childKey(clusterKey, id)] = f
		}
		return nil
	})
	return applied, err
}

func nodePoolFailed(np *nodePool, now time.Time) bool {
	st, _ := np.tl.at(now)
	return st == cs.NodePoolStateError || st == cs.NodePoolStateRecoverableError
}

func applyNodePoolFailure(np *nodePool, f NodePoolFailure, now time.Time) error {
	switch st, _ := np.tl.at(now); st {
	case cs.NodePoolStateUninstalling:
		return fmt.Errorf("node pool %s is uninstalling", np.id)
	case cs.NodePoolStateValidating, cs.NodePoolStatePending,
		cs.NodePoolStateValidatingUpdate, cs.NodePoolStatePendingUpdate:
		np.tl = np.tl.failBefore(f.State, cs.NodePoolStateInstalling, cs.NodePoolStateUpdating)
	default:
		np.tl = settled(now, f.State)
	}
	np.message = f.Message
	return nil
}

// FailExternalAuth puts external auth id of the clusters clusterKey names
// in state error, now or once it is created.
func (s *Simulator) FailExternalAuth(clusterKey, id string, f ExternalAuthFailure) (bool, error) {
	if clusterKey == "" || id == "" {
		return false, fmt.Errorf("external auth failure: cluster key %q and id %q must not be empty", clusterKey, id)
	}
	applied := false
	err := s.locked(func(now time.Time) error {
		for _, c := range s.liveClusters(now) {
			if ea := c.liveExternalAuth(id, now); ea != nil && c.matchesKey(clusterKey) && !externalAuthFailed(ea, now) {
				if st, _ := ea.tl.at(now); st == cs.ExternalAuthStateUninstalling {
					return fmt.Errorf("external auth %s is uninstalling", id)
				}
				ea.tl = settled(now, cs.ExternalAuthStateError)
				ea.message = f.Message
				applied = true
			}
		}
		if !applied {
			s.armed.externalAuths[childKey(clusterKey, id)] = f
		}
		return nil
	})
	return applied, err
}

func externalAuthFailed(ea *externalAuth, now time.Time) bool {
	st, _ := ea.tl.at(now)
	return st == cs.ExternalAuthStateError
}
