package simulator

import (
	"maps"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Object kinds of the truth.
const (
	KindCluster      = "cluster"
	KindNodePool     = "node_pool"
	KindExternalAuth = "external_auth"
)

// Object is what CS truly holds of one object at an instant, as a
// simulation's oracle reads it: no request is recorded, no latency, no
// fault, whatever stands in front of the API.
type Object struct {
	Kind    string
	Href    string
	Cluster string // the href of the object's cluster (its own, for a cluster)
	State   string
	// Azure is a cluster's ARM resource; Name a child's id (its
	// lower-cased ARM name).
	Azure cs.AzureRef
	Name  string
	// Version is the raw version the object runs.
	Version string
	// Upgrading: an upgrade policy of the object is scheduled or started;
	// UpgradeState is its newest policy's state and UpgradeVersion its
	// version.
	Upgrading      bool
	UpgradeState   string
	UpgradeVersion string
	// Failed holds CS's words when the object or its newest upgrade
	// failed.
	Failed string

	Replicas                    int
	Labels                      map[string]string
	NodeDrainGracePeriodMinutes int
	AuthorizedCIDRs             []string
	IssuerURL                   string
	Audiences                   []string
}

// Truth is every object CS holds now, by href.
func (s *Simulator) Truth() map[string]Object {
	out := map[string]Object{}
	_ = s.locked(func(now time.Time) error {
		for _, c := range s.liveClusters(now) {
			out[c.href()] = c.truth(now)
			for _, np := range c.liveNodePools(now) {
				o := np.truth(c, now)
				out[o.Href] = o
			}
			for _, ea := range c.liveExternalAuths(now) {
				o := ea.truth(c, now)
				out[o.Href] = o
			}
		}
		return nil
	})
	return out
}

func (c *cluster) truth(now time.Time) Object {
	az := c.spec.Azure()
	o := Object{Kind: KindCluster, Href: c.href(), Cluster: c.href(), State: c.state(now),
		Azure: cs.AzureRef{SubscriptionID: az.SubscriptionID(), ResourceGroupName: az.ResourceGroupName(),
			ResourceName: az.ResourceName(), TenantID: az.TenantID(), ManagedResourceGroupName: az.ManagedResourceGroupName()},
		NodeDrainGracePeriodMinutes: int(c.spec.NodeDrainGracePeriod().Value()),
	}
	o.Version, _ = c.version(now)
	if allow, ok := c.spec.API().GetCIDRBlockAccess(); ok {
		o.AuthorizedCIDRs = allow.Allow().Values()
	}
	if o.State == cs.ClusterStateError && c.failure != nil {
		o.Failed = c.failure.Code + ": " + c.failure.Message
	}
	o.upgrades(c.upgrades, now)
	return o
}

func (np *nodePool) truth(c *cluster, now time.Time) Object {
	st, _ := np.tl.at(now)
	o := Object{Kind: KindNodePool, Href: np.href(c), Cluster: c.href(), State: st, Name: np.id,
		Replicas: np.spec.Replicas(), Labels: maps.Clone(np.spec.Labels())}
	o.Version, _ = np.version(now)
	if st == cs.NodePoolStateError || st == cs.NodePoolStateRecoverableError {
		o.Failed = np.message
	}
	o.upgrades(np.upgrades, now)
	return o
}

func (ea *externalAuth) truth(c *cluster, now time.Time) Object {
	st, _ := ea.tl.at(now)
	o := Object{Kind: KindExternalAuth, Href: cs.ExternalAuthHref(c.href(), ea.id), Cluster: c.href(), State: st,
		Name: ea.id, IssuerURL: ea.spec.Issuer().URL(), Audiences: ea.spec.Issuer().Audiences()}
	if st == cs.ExternalAuthStateError {
		o.Failed = ea.message
	}
	return o
}

// upgrades fills in what the newest upgrade policy says.
func (o *Object) upgrades(policies []*upgradePolicy, now time.Time) {
	if len(policies) == 0 {
		return
	}
	p := policies[len(policies)-1]
	o.UpgradeState, o.UpgradeVersion = p.state(now), p.Version
	o.Upgrading = p.active(now)
	if o.UpgradeState == cs.UpgradePolicyStateFailed || o.UpgradeState == cs.UpgradePolicyStateCancelled {
		o.Failed = p.Failure
	}
}
