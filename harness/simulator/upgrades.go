package simulator

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Upgrades. A control plane upgrade policy ({cluster}/control_plane_upgrade_
// policies) or a node pool upgrade policy ({node pool}/upgrade_policies)
// is a timed state machine like every other object here: scheduled for
// the *_upgrade_scheduled duration, started for *_upgrading, then
// completed — and from then on the cluster or node pool runs the policy's
// version — or failed with the armed failure's description. A policy is
// accepted only for an enabled version of the object's channel group that
// is an available upgrade of the version it runs (a node pool's also no
// newer than its control plane), and only while no other policy is under
// way, as CS refuses the rest.

// upgradePolicy is one upgrade policy; plain fields, so a snapshot can
// keep it.
type upgradePolicy struct {
	ID        string        `json:"id"`
	Version   string        `json:"version"`    // the raw id it upgrades to
	VersionID string        `json:"version_id"` // CS's id of that version
	Created   time.Time     `json:"created"`
	Scheduled time.Duration `json:"scheduled"`
	Upgrading time.Duration `json:"upgrading"`
	// Failure, when set, is CS's description of the failed upgrade, or
	// of the cancelled one when Cancelled.
	Failure   string `json:"failure,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
}

// state is the policy's state at now.
func (p *upgradePolicy) state(now time.Time) string {
	started := p.Created.Add(p.Scheduled)
	switch {
	case now.Before(started):
		return cs.UpgradePolicyStateScheduled
	case now.Before(started.Add(p.Upgrading)):
		return cs.UpgradePolicyStateStarted
	case p.Failure != "" && p.Cancelled:
		return cs.UpgradePolicyStateCancelled
	case p.Failure != "":
		return cs.UpgradePolicyStateFailed
	}
	return cs.UpgradePolicyStateCompleted
}

func (p *upgradePolicy) active(now time.Time) bool {
	st := p.state(now)
	return st == cs.UpgradePolicyStateScheduled || st == cs.UpgradePolicyStateStarted
}

func (p *upgradePolicy) stateBuilder(now time.Time) *arohcp.UpgradePolicyStateBuilder {
	st := p.state(now)
	b := arohcp.NewUpgradePolicyState().Value(arohcp.UpgradePolicyStateValue(st))
	switch st {
	case cs.UpgradePolicyStateFailed, cs.UpgradePolicyStateCancelled:
		b.Description(p.Failure)
	case cs.UpgradePolicyStateCompleted:
		b.Description("Upgrade to " + p.Version + " completed")
	default:
		b.Description("Upgrade to " + p.Version + " " + st)
	}
	return b
}

// completed is the newest completed policy, nil when none.
func completed(policies []*upgradePolicy, now time.Time) *upgradePolicy {
	for _, p := range slices.Backward(policies) {
		if p.state(now) == cs.UpgradePolicyStateCompleted {
			return p
		}
	}
	return nil
}

// runningVersion is the version the newest completed policy upgraded to,
// else base.
func runningVersion(policies []*upgradePolicy, base string, now time.Time) string {
	if p := completed(policies, now); p != nil {
		return p.Version
	}
	return base
}

// UpgradeFailure is what a failed upgrade reports: CS's description;
// with Cancel the policy ends cancelled instead of failed.
type UpgradeFailure struct {
	Message string `json:"message"`
	Cancel  bool   `json:"cancel,omitempty"`
}

func (f UpgradeFailure) normalize() UpgradeFailure {
	if f.Message == "" {
		f.Message = "The upgrade failed: the control plane did not become available at the new version"
	}
	return f
}

// versionOf is the raw id and channel group a cluster or node pool spec
// names.
func versionOf(v *arohcp.Version) (raw, group string) {
	group = v.ChannelGroup()
	if group == "" {
		group = "stable"
	}
	return cs.RawVersion(v.ID(), v.RawID(), v.ChannelGroup()), group
}

// resolveVersion turns a posted version into one the simulator offers: a
// z-stream it knows as is, a minor ("4.20") as the newest enabled z-stream
// of that minor in the channel group; anything else is kept as posted.
// Callers hold mu.
func (s *Simulator) resolveVersion(v *arohcp.Version) *arohcp.VersionBuilder {
	raw, group := versionOf(v)
	var best *cs.Version
	for i := range s.versions {
		o := &s.versions[i]
		if o.ChannelGroup != group || !o.Enabled {
			continue
		}
		if o.RawID == raw {
			best = o
			break
		}
		if strings.HasPrefix(o.RawID, raw+".") && strings.Count(raw, ".") == 1 &&
			(best == nil || newer(o.RawID, best.RawID)) {
			best = o
		}
	}
	if best == nil {
		return arohcp.NewVersion().Copy(v)
	}
	return arohcp.NewVersion().ID(best.ID).RawID(best.RawID).ChannelGroup(best.ChannelGroup)
}

// newer says whether a is a newer version than b; a value that is not a
// version is not.
func newer(a, b string) bool {
	n, err := cs.CompareVersions(a, b)
	return err == nil && n > 0
}

// offered is the version record for raw in group, nil when none.
func (s *Simulator) offered(raw, group string) *cs.Version {
	for i := range s.versions {
		if s.versions[i].RawID == raw && s.versions[i].ChannelGroup == group {
			return &s.versions[i]
		}
	}
	return nil
}

// checkUpgrade returns the target, or refuses one CS would: not offered
// or disabled in the group, or not an available upgrade of from.
func (s *Simulator) checkUpgrade(kind, from, to, group string) (*cs.Version, error) {
	target := s.offered(to, group)
	if target == nil || !target.Enabled {
		return nil, errf(http.StatusBadRequest, "Version '%s' is not available in channel group '%s'", to, group)
	}
	cur := s.offered(from, group)
	if cur == nil || !slices.Contains(cur.AvailableUpgrades, to) {
		return nil, errf(http.StatusBadRequest, "Can't upgrade %s from version '%s' to '%s': no upgrade path", kind, from, to)
	}
	return target, nil
}

// newPolicy starts a policy to version now, taking the armed failure.
// Callers hold mu.
func (s *Simulator) newPolicy(version *cs.Version, scheduled, upgrading time.Duration, armed *UpgradeFailure, now time.Time) *upgradePolicy {
	p := &upgradePolicy{ID: s.newUUID(), Version: version.RawID, VersionID: version.ID, Created: now,
		Scheduled: scheduled, Upgrading: upgrading}
	if armed != nil {
		p.Failure, p.Cancelled = armed.Message, armed.Cancel
	}
	return p
}

func (s *Simulator) listControlPlaneUpgradePolicies(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "ControlPlaneUpgradePolicyList", arohcp.MarshalControlPlaneUpgradePolicyList,
		func(now time.Time, page, size int) ([]*arohcp.ControlPlaneUpgradePolicy, int, error) {
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, 0, err
			}
			return renderPage(c.upgrades, page, size, func(p *upgradePolicy) (*arohcp.ControlPlaneUpgradePolicy, error) {
				return c.policyObject(p, now)
			})
		})
}

func (s *Simulator) postControlPlaneUpgradePolicy(w http.ResponseWriter, r *http.Request) {
	in, err := readObject(r, arohcp.UnmarshalControlPlaneUpgradePolicy)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	serveObject(s, w, r, http.StatusCreated, arohcp.MarshalControlPlaneUpgradePolicy,
		func(now time.Time) (*arohcp.ControlPlaneUpgradePolicy, error) {
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, err
			}
			if st, ok := c.acceptsChanges(now); !ok {
				return nil, errf(http.StatusBadRequest, "Cluster '%s' is in state '%s', can't upgrade", c.id, st)
			}
			if err := checkNoActive(c.upgrades, now); err != nil {
				return nil, err
			}
			from, group := c.version(now)
			to := cs.RawVersion(in.Version(), "", group)
			target, err := s.checkUpgrade("cluster", from, to, group)
			if err != nil {
				return nil, err
			}
			d := s.durations
			p := s.newPolicy(target, d.ControlPlaneUpgradeScheduled, d.ControlPlaneUpgrading, c.upgradeFailure, now)
			c.upgradeFailure = nil
			c.upgrades = append(c.upgrades, p)
			return c.policyObject(p, now)
		})
}

func checkNoActive(policies []*upgradePolicy, now time.Time) error {
	for _, p := range policies {
		if p.active(now) {
			return errf(http.StatusBadRequest, "There is already an upgrade policy to version '%s' in state '%s'", p.Version, p.state(now))
		}
	}
	return nil
}

// version is the raw id and channel group the cluster runs at now.
func (c *cluster) version(now time.Time) (string, string) {
	raw, group := versionOf(c.spec.Version())
	return runningVersion(c.upgrades, raw, now), group
}

func (c *cluster) policyObject(p *upgradePolicy, now time.Time) (*arohcp.ControlPlaneUpgradePolicy, error) {
	return arohcp.NewControlPlaneUpgradePolicy().ID(p.ID).
		HREF(c.href() + "/control_plane_upgrade_policies/" + p.ID).
		ClusterID(c.id).Version(p.Version).CreationTimestamp(p.Created).LastUpdateTimestamp(now).
		State(p.stateBuilder(now)).Build()
}

func (s *Simulator) listNodePoolUpgradePolicies(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "NodePoolUpgradePolicyList", arohcp.MarshalNodePoolUpgradePolicyList,
		func(now time.Time, page, size int) ([]*arohcp.NodePoolUpgradePolicy, int, error) {
			c, np, err := s.mustNodePool(r, now, "")
			if err != nil {
				return nil, 0, err
			}
			return renderPage(np.upgrades, page, size, func(p *upgradePolicy) (*arohcp.NodePoolUpgradePolicy, error) {
				return np.policyObject(c, p, now)
			})
		})
}

func (s *Simulator) postNodePoolUpgradePolicy(w http.ResponseWriter, r *http.Request) {
	in, err := readObject(r, arohcp.UnmarshalNodePoolUpgradePolicy)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	serveObject(s, w, r, http.StatusCreated, arohcp.MarshalNodePoolUpgradePolicy,
		func(now time.Time) (*arohcp.NodePoolUpgradePolicy, error) {
			c, np, err := s.mustNodePool(r, now, refuseNodePoolUpdate)
			if err != nil {
				return nil, err
			}
			if st, ok := c.acceptsChanges(now); !ok {
				return nil, errf(http.StatusBadRequest, refuseNodePoolUpdate, st)
			}
			if st, _ := np.tl.at(now); st != cs.NodePoolStateReady {
				return nil, errf(http.StatusBadRequest, "Node pool '%s' is in state '%s', can't upgrade", np.id, st)
			}
			if err := checkNoActive(np.upgrades, now); err != nil {
				return nil, err
			}
			from, group := np.version(now)
			to := cs.RawVersion(in.Version(), "", group)
			if cp, _ := c.version(now); newer(to, cp) {
				return nil, errf(http.StatusBadRequest,
					"Can't upgrade node pool '%s' to '%s': newer than its control plane version '%s'", np.id, to, cp)
			}
			target, err := s.checkUpgrade("node pool", from, to, group)
			if err != nil {
				return nil, err
			}
			d := s.durations
			p := s.newPolicy(target, d.NodePoolUpgradeScheduled, d.NodePoolUpgrading, np.upgradeFailure, now)
			np.upgradeFailure = nil
			np.upgrades = append(np.upgrades, p)
			return np.policyObject(c, p, now)
		})
}

// version is the raw id and channel group the node pool runs at now.
func (np *nodePool) version(now time.Time) (string, string) {
	raw, group := versionOf(np.spec.Version())
	return runningVersion(np.upgrades, raw, now), group
}

func (np *nodePool) policyObject(c *cluster, p *upgradePolicy, now time.Time) (*arohcp.NodePoolUpgradePolicy, error) {
	return arohcp.NewNodePoolUpgradePolicy().ID(p.ID).
		HREF(np.href(c) + "/upgrade_policies/" + p.ID).
		ClusterID(c.id).NodePoolID(np.id).Version(p.Version).CreationTimestamp(p.Created).LastUpdateTimestamp(now).
		State(p.stateBuilder(now)).Build()
}

// runningVersionBuilder renders the version an object runs at now: the
// one its newest completed upgrade reached, nil while that is its spec's.
func runningVersionBuilder(spec *arohcp.Version, policies []*upgradePolicy, now time.Time) *arohcp.VersionBuilder {
	p := completed(policies, now)
	if p == nil {
		return nil
	}
	_, group := versionOf(spec)
	return arohcp.NewVersion().ID(p.VersionID).RawID(p.Version).ChannelGroup(group)
}

// FailUpgrade arms the next control plane upgrade of the cluster (or its
// node pool id, when id is not "") to fail with f's message; an upgrade
// under way fails at once where it stands. It reports whether an upgrade
// under way was failed.
func (s *Simulator) FailUpgrade(clusterKey, id string, f UpgradeFailure) (bool, error) {
	f = f.normalize()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, c := range s.liveClusters(now) {
		if !c.matchesKey(clusterKey) {
			continue
		}
		policies, armed := &c.upgrades, &c.upgradeFailure
		if id != "" {
			np := c.liveNodePool(id, now)
			if np == nil {
				return false, fmt.Errorf("cluster %s has no node pool %q", clusterKey, id)
			}
			policies, armed = &np.upgrades, &np.upgradeFailure
		}
		for _, p := range *policies {
			if p.active(now) {
				p.Failure, p.Cancelled = f.Message, f.Cancel
				if p.state(now) == cs.UpgradePolicyStateScheduled {
					p.Scheduled = now.Sub(p.Created)
				}
				p.Upgrading = max(now.Sub(p.Created)-p.Scheduled, 0)
				return true, nil
			}
		}
		*armed = &f
		return false, nil
	}
	return false, fmt.Errorf("no live cluster %q", clusterKey)
}

func (s *Simulator) postUpgradeFailure(w http.ResponseWriter, r *http.Request) {
	var f UpgradeFailure
	if !s.adminDecode(w, r, &f) {
		return
	}
	failed, err := s.FailUpgrade(r.PathValue("key"), r.PathValue("id"), f)
	if s.adminCheck(w, r, err) {
		s.adminReply(w, r, map[string]bool{"failed_now": failed})
	}
}
