package dst

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// A run's region: a few clusters, each with a few children.
const (
	maxClusters      = 3
	maxNodePools     = 2
	maxExternalAuths = 1
)

// customer is the frontend's side of a run: ARM requests at random times,
// written by the project's stand-in for ARO-HCP's frontend, each one the
// frontend accepts made known to the oracle with what it asked.
type customer struct {
	w   *world
	rng *rand.Rand
	fe  *frontend.Frontend
	ctx context.Context
}

func newCustomer(w *world) *customer {
	c := &customer{w: w, rng: w.stream(), ctx: withActor(w.ctx, actorFrontend)}
	c.fe = frontend.New(w.store, clock.Real{}, func() string {
		var b [16]byte
		for i := range b {
			b[i] = byte(c.rng.Uint32())
		}
		u, _ := uuid.FromBytes(b[:])
		u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
		return u.String()
	})
	return c
}

// run makes requests until end.
func (c *customer) run(end time.Time) {
	for {
		wait := time.Duration(c.rng.ExpFloat64() * float64(90*time.Second))
		if time.Now().Add(wait).After(end) || !sleep(c.ctx, wait) {
			return
		}
		c.w.sched.gate(c.ctx, "acts")
		c.act()
	}
}

type action struct {
	name string
	do   func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error)
}

func (c *customer) act() {
	if c.rng.IntN(6) == 0 {
		c.failCS()
	}
	acts := c.actions()
	a := acts[c.rng.IntN(len(acts))]
	opts := frontend.Options{TenantID: testsupport.Tenant, ClientID: testsupport.Client, ClientRequestID: "dst", CorrelationRequestID: "dst"}
	label := fmt.Sprintf("n%d", c.rng.Uint32())
	if c.rng.IntN(4) > 0 {
		opts.NotificationURI = c.w.sink.uri(label)
	}
	acc, asked, askedS, err := a.do(opts)
	c.w.cover.action(a.name, err)
	if err != nil {
		c.w.trace.note("frontend refused %s: %v", a.name, err)
		return
	}
	op := acc.Operation
	c.w.trace.note("frontend accepted %s: %s %s", a.name, op.Name(), op.Properties.ExternalID)
	c.w.oracle.ask(op, asked, askedS, label, opts.NotificationURI != "")
}

func clusterRID(i int) string { return testsupport.ClusterRID(fmt.Sprintf("c%d", i)) }

func (c *customer) cluster() string { return clusterRID(1 + c.rng.IntN(maxClusters)) }

func (c *customer) nodePool() string {
	return c.cluster() + fmt.Sprintf("/nodePools/np%d", 1+c.rng.IntN(maxNodePools))
}

func (c *customer) externalAuth() string {
	return c.cluster() + fmt.Sprintf("/externalAuths/ea%d", 1+c.rng.IntN(maxExternalAuths))
}

func clusterSpec(rid string) frontend.ClusterSpec {
	name := rid[strings.LastIndex(rid, "/")+1:]
	return frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable", ManagedResourceGroup: name + "-mrg",
		Tags: map[string]string{"env": "dst"}, NodeDrainTimeoutMinutes: new(15), AuthorizedCIDRs: []string{"10.0.0.0/8"}}
}

func nodePoolSpec() frontend.NodePoolSpec {
	return frontend.NodePoolSpec{VersionID: "4.20.8", ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: 2,
		AutoRepair: true, Labels: map[string]string{"team": "blue"}}
}

func externalAuthSpec() frontend.ExternalAuthSpec {
	return frontend.ExternalAuthSpec{IssuerURL: "https://login.microsoftonline.com/" + testsupport.Tenant + "/v2.0",
		Audiences: []string{"app-1"}}
}

// actions are the requests a customer makes, each with what an update
// asks of CS's object.
func (c *customer) actions() []action {
	ctx := c.ctx
	none := func(acc frontend.Accepted, err error) (frontend.Accepted, func(simulator.Object) bool, string, error) {
		return acc, nil, "", err
	}
	return []action{
		{"create cluster", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			rid := c.cluster()
			return none(c.fe.PutCluster(ctx, rid, clusterSpec(rid), o))
		}},
		{"create cluster", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			rid := c.cluster()
			return none(c.fe.PutCluster(ctx, rid, clusterSpec(rid), o))
		}},
		{"create node pool", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.PutNodePool(ctx, c.nodePool(), nodePoolSpec(), o))
		}},
		{"create node pool", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.PutNodePool(ctx, c.nodePool(), nodePoolSpec(), o))
		}},
		{"create external auth", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.PutExternalAuth(ctx, c.externalAuth(), externalAuthSpec(), o))
		}},
		{"update cluster", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			rid := c.cluster()
			s := clusterSpec(rid)
			s.VersionID = c.version(rid, s.VersionID)
			drain := 5 + c.rng.IntN(50)
			s.NodeDrainTimeoutMinutes = &drain
			s.AuthorizedCIDRs = []string{fmt.Sprintf("10.%d.0.0/16", c.rng.IntN(200))}
			acc, err := c.fe.UpdateCluster(ctx, rid, s, o)
			return acc, func(x simulator.Object) bool {
				return x.NodeDrainGracePeriodMinutes == drain && slices.Equal(x.AuthorizedCIDRs, s.AuthorizedCIDRs)
			}, fmt.Sprintf("drain %d, cidrs %v", drain, s.AuthorizedCIDRs), err
		}},
		{"upgrade cluster", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			rid := c.cluster()
			s := clusterSpec(rid)
			s.VersionID = []string{"4.21", "4.22"}[c.rng.IntN(2)]
			acc, err := c.fe.UpdateCluster(ctx, rid, s, o)
			return acc, func(x simulator.Object) bool { return strings.HasPrefix(x.Version, s.VersionID+".") },
				"version " + s.VersionID, err
		}},
		{"update node pool", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			rid := c.nodePool()
			s := nodePoolSpec()
			s.VersionID = c.version(rid, s.VersionID)
			s.Replicas = 1 + c.rng.IntN(5)
			s.Labels = map[string]string{"team": []string{"blue", "red", "green"}[c.rng.IntN(3)]}
			acc, err := c.fe.UpdateNodePool(ctx, rid, s, o)
			return acc, func(x simulator.Object) bool { return x.Replicas == s.Replicas && maps.Equal(x.Labels, s.Labels) },
				fmt.Sprintf("replicas %d, labels %v", s.Replicas, s.Labels), err
		}},
		{"upgrade node pool", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			s := nodePoolSpec()
			s.VersionID = []string{"4.20.10", "4.20.25", "4.21.20"}[c.rng.IntN(3)]
			acc, err := c.fe.UpdateNodePool(ctx, c.nodePool(), s, o)
			return acc, func(x simulator.Object) bool { return x.Version == s.VersionID }, "version " + s.VersionID, err
		}},
		{"update external auth", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			s := externalAuthSpec()
			s.Audiences = []string{fmt.Sprintf("app-%d", c.rng.IntN(9))}
			acc, err := c.fe.UpdateExternalAuth(ctx, c.externalAuth(), s, o)
			return acc, func(x simulator.Object) bool { return slices.Equal(x.Audiences, s.Audiences) },
				fmt.Sprintf("audiences %v", s.Audiences), err
		}},
		{"delete cluster", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.Delete(ctx, c.cluster(), o))
		}},
		{"delete node pool", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.Delete(ctx, c.nodePool(), o))
		}},
		{"delete external auth", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.Delete(ctx, c.externalAuth(), o))
		}},
		{"request credential", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.RequestCredential(ctx, c.cluster(), o))
		}},
		{"revoke credentials", func(o frontend.Options) (frontend.Accepted, func(simulator.Object) bool, string, error) {
			return none(c.fe.RevokeCredentials(ctx, c.cluster(), o))
		}},
	}
}

// failCS arms CS's own failures now and then: an install, a node pool or
// an upgrade that CS fails, which the engine must report as Failed.
func (c *customer) failCS() {
	switch c.rng.IntN(10) {
	case 0:
		_, _ = c.w.sim.FailCluster(fmt.Sprintf("c%d", 1+c.rng.IntN(maxClusters)),
			simulator.ClusterFailure{Code: "OCM3055", Message: "quota exceeded"})
	case 1:
		_, _ = c.w.sim.FailNodePool(fmt.Sprintf("c%d", 1+c.rng.IntN(maxClusters)), fmt.Sprintf("np%d", 1+c.rng.IntN(maxNodePools)),
			simulator.NodePoolFailure{State: "error", Message: "VM size not available"})
	case 2:
		_, _ = c.w.sim.FailUpgrade(fmt.Sprintf("c%d", 1+c.rng.IntN(maxClusters)), "",
			simulator.UpgradeFailure{Message: "etcd quorum lost during upgrade"})
	}
}

// operator ends an operation by hand now and then, as `ops fail` does.
func (w *world) operator(rng *rand.Rand, end time.Time) {
	if rng.IntN(3) > 0 {
		return
	}
	at := time.Duration(rng.Int64N(int64(time.Until(end))))
	ctx := withActor(w.ctx, actorOperator)
	if !sleep(ctx, at) {
		return
	}
	w.sched.gate(ctx, "acts")
	name := w.oracle.someActive(rng)
	if name == nil {
		return
	}
	status := arm.ProvisioningStateFailed
	if rng.IntN(2) == 0 {
		status = arm.ProvisioningStateCanceled
	}
	_, err := abandon(ctx, w, abandonRequest(name, status))
	w.cover.action("operator "+string(status), err)
	w.trace.note("operator ends %s %s: %v", name.name, status, err)
}

func targetKind(rid string) document.Kind {
	k, _, _ := document.ResourceKindOfID("resourceID", rid)
	return k
}

// version is the version the resource at rid asks for now, as a PUT that
// changes something else carries it; def when it has none.
func (c *customer) version(rid, def string) string {
	item, err := c.w.mem.Get(context.Background(), testsupport.Subscription, document.CosmosID(rid))
	if err != nil {
		return def
	}
	r, err := document.ParseResource(item.Body)
	if err != nil || r.Version().ID == "" {
		return def
	}
	return r.Version().ID
}
