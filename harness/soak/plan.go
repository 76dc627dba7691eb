package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
)

const (
	resourceGroup = "hcpops-soak"
	location      = "eastus"
)

// request is one ARM request of a scenario.
type request struct {
	label string // unique in the run, e.g. "c007/update-np1"
	kind  string // for the summary, e.g. "update node pool"
	// want are the acceptable outcomes; more than one only where the
	// request races another by design.
	want []arm.ProvisioningState
	// wantCode, when set, is the error code a Failed outcome must carry.
	wantCode string
	// deadline, when set, is the create's completion deadline, counted
	// from the operation's start; the request must end Failed at it.
	deadline time.Duration
	// delay holds the request back after the one before it in its stage.
	delay   time.Duration
	prepare func(*simulator.Simulator) error
	submit  func(context.Context, *frontend.Frontend, frontend.Options) (frontend.Accepted, error)
}

// stage is a set of requests sent together; the next stage starts once
// all of them are terminal.
type stage []request

// scenario is the life of one cluster and its children, in one
// subscription of its own.
type scenario struct {
	name         string // e.g. "c007"
	cluster      string // the ARM cluster name
	shape        string // which script it follows
	subscription string
	start        time.Duration // offset from the start of the run
	stages       []stage
}

func (s scenario) requests() int {
	n := 0
	for _, st := range s.stages {
		n += len(st)
	}
	return n
}

// ids builds the ARM IDs of one scenario.
type ids struct{ subscription, cluster string }

func (i ids) clusterID() string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/%s/%s", i.subscription, resourceGroup, arm.ClusterResourceType, i.cluster)
}
func (i ids) nodePoolID(name string) string {
	return i.clusterID() + "/" + arm.NodePoolsType + "/" + name
}
func (i ids) externalAuthID(name string) string {
	return i.clusterID() + "/" + arm.ExternalAuthsType + "/" + name
}

var (
	succeeded = []arm.ProvisioningState{arm.ProvisioningStateSucceeded}
	failed    = []arm.ProvisioningState{arm.ProvisioningStateFailed}
	// A request superseded by a later one ends Canceled, unless it
	// finished first.
	raced = []arm.ProvisioningState{arm.ProvisioningStateSucceeded, arm.ProvisioningStateCanceled}
)

func clusterSpec(tags map[string]string) frontend.ClusterSpec {
	return frontend.ClusterSpec{Location: location, VersionID: "4.20", ChannelGroup: "stable", Tags: tags}
}

func nodePoolSpec(replicas int) frontend.NodePoolSpec {
	return frontend.NodePoolSpec{VersionID: "4.20.3", ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: replicas, AutoRepair: true}
}

func externalAuthSpec(audience string) frontend.ExternalAuthSpec {
	return frontend.ExternalAuthSpec{IssuerURL: "https://issuer.soak.example/v2.0", Audiences: []string{audience}}
}

// builder writes one scenario's requests.
type builder struct {
	ids
	name string
	sick sickPlan
}

// sickPlan is the sick subset: every so many scenarios one whose cluster
// Clusters Service never serves properly, with a short create deadline.
type sickPlan struct {
	every    int // 0: no sick subset
	deadline time.Duration
}

func (p sickPlan) shape(i int) (string, bool) {
	if p.every <= 0 || i%p.every != p.every-1 {
		return "", false
	}
	return sickShapes[(i/p.every)%len(sickShapes)], true
}

func (b builder) req(label, kind string, want []arm.ProvisioningState,
	submit func(context.Context, *frontend.Frontend, frontend.Options) (frontend.Accepted, error)) request {
	return request{label: b.name + "/" + label, kind: kind, want: want, submit: submit}
}

func (b builder) putCluster(label, kind string, want []arm.ProvisioningState, tags map[string]string) request {
	return b.req(label, kind, want, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.PutCluster(ctx, b.clusterID(), clusterSpec(tags), o)
	})
}

func (b builder) putNodePool(label, kind, np string, want []arm.ProvisioningState, replicas int) request {
	return b.req(label, kind, want, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.PutNodePool(ctx, b.nodePoolID(np), nodePoolSpec(replicas), o)
	})
}

func (b builder) putExternalAuth(label, kind, ea string, want []arm.ProvisioningState, audience string) request {
	return b.req(label, kind, want, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.PutExternalAuth(ctx, b.externalAuthID(ea), externalAuthSpec(audience), o)
	})
}

func (b builder) del(label, kind, id string, want []arm.ProvisioningState) request {
	return b.req(label, kind, want, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.Delete(ctx, id, o)
	})
}

func (b builder) requestCredential(label string) request {
	return b.req(label, "request-credential", succeeded, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RequestCredential(ctx, b.clusterID(), o)
	})
}

func (b builder) revokeCredentials(label string) request {
	return b.req(label, "revoke-credentials", succeeded, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RevokeCredentials(ctx, b.clusterID(), o)
	})
}

// Scenario shapes. Every request kind appears in "full"; the others stage
// the failures the simulator can produce and a delete that supersedes an
// update in flight.
const (
	shapeFull           = "full"
	shapeProvisionError = "provision-error"
	shapeInflightChecks = "inflight-checks"
	shapeNodePoolError  = "nodepool-error"
	shapeSupersede      = "supersede"
	shapeSickHang       = "sick-hang"
	shapeSickStuck      = "sick-stuck"
	shapeSickGarbage    = "sick-garbage"
	shapeSickPool       = "sick-pool"
)

// The summary's rows for the sick subset.
const (
	kindSickCreate     = "create cluster (sick CS object)"
	kindSickPoolCreate = "create node pool (sick CS object)"
)

// sickShapes cycle through the sick subset. The garbage shape comes first,
// so its cluster starts early in the run: started near the CS fault
// windows (40% and 65% of the duration), a loaded machine's slow ticks
// could leave every request about it to a window until its deadline, and
// the run would garble none (a make test beside the simulation search saw
// "10 hung and 0 garbled").
var sickShapes = []string{shapeSickGarbage, shapeSickStuck, shapeSickHang, shapeSickPool}

// sickness of each sick shape: its cluster's, or its node pool's.
var shapeSickness = map[string]sickness{shapeSickHang: sickHang, shapeSickStuck: sickHangCreated, shapeSickGarbage: sickGarbage,
	shapeSickPool: sickHangCreated}

// sickPoolName is the sick node pool of a sick-pool scenario, unique in a
// run so its CS ID names it.
func sickPoolName(scenario string) string { return "np-sick-" + scenario }

// shapeCycle is the mix: mostly full lives, one of each other shape.
var shapeCycle = []string{shapeFull, shapeProvisionError, shapeFull, shapeNodePoolError, shapeFull,
	shapeInflightChecks, shapeFull, shapeSupersede}

func build(shape string, b builder, rng *rand.Rand) []stage {
	switch shape {
	case shapeSickHang, shapeSickStuck, shapeSickGarbage:
		// Nothing follows: CS never answers properly about this cluster.
		create := b.putCluster("create", kindSickCreate, failed, nil)
		create.wantCode, create.deadline = arm.CodeInternalServerError, b.sick.deadline
		return []stage{{create}}
	case shapeSickPool:
		// A healthy cluster whose one sick node pool must not hold up its
		// sibling; nothing follows.
		sick := b.putNodePool("create-np-sick", kindSickPoolCreate, sickPoolName(b.name), failed, 2)
		sick.wantCode, sick.deadline = arm.CodeInternalServerError, b.sick.deadline
		return []stage{
			{b.putCluster("create", "create cluster", succeeded, nil)},
			{sick, b.putNodePool("create-np1", "create node pool", "np1", succeeded, 2)},
		}
	case shapeProvisionError:
		create := b.putCluster("create", "create cluster", failed, nil)
		create.wantCode = "OCM3055"
		create.prepare = func(sim *simulator.Simulator) error {
			_, err := sim.FailCluster(b.cluster, simulator.ClusterFailure{Code: "OCM3055", Message: "simulated: quota exceeded in " + location})
			return err
		}
		return []stage{{create}, {b.del("delete", "delete cluster", b.clusterID(), succeeded)}}
	case shapeInflightChecks:
		create := b.putCluster("create", "create cluster", failed, nil)
		create.prepare = func(sim *simulator.Simulator) error {
			_, err := sim.FailCluster(b.cluster, simulator.ClusterFailure{Code: "OCM4001", FailedChecks: 2})
			return err
		}
		return []stage{{create}, {b.del("delete", "delete cluster", b.clusterID(), succeeded)}}
	case shapeNodePoolError:
		broken := b.putNodePool("create-np-broken", "create node pool", "np-broken", failed, 3)
		broken.prepare = func(sim *simulator.Simulator) error {
			_, err := sim.FailNodePool(b.cluster, "np-broken", simulator.NodePoolFailure{
				State: clusterservice.NodePoolStateError, Message: "simulated: VM size not available in the region"})
			return err
		}
		return []stage{
			{b.putCluster("create", "create cluster", succeeded, nil)},
			{broken, b.putNodePool("create-np1", "create node pool", "np1", succeeded, 2)},
			// The broken pool goes with the cluster, by an implicit delete.
			{b.del("delete", "delete cluster", b.clusterID(), succeeded)},
		}
	case shapeSupersede:
		update := b.putNodePool("update-np1", "update node pool", "np1", raced, 4)
		del := b.del("delete", "delete cluster", b.clusterID(), succeeded)
		del.delay = time.Duration(rng.IntN(800)) * time.Millisecond
		return []stage{
			{b.putCluster("create", "create cluster", succeeded, nil)},
			{b.putNodePool("create-np1", "create node pool", "np1", succeeded, 2)},
			{update, del},
		}
	}
	return []stage{
		{b.putCluster("create", "create cluster", succeeded, map[string]string{"soak": b.name})},
		{
			b.putNodePool("create-np1", "create node pool", "np1", succeeded, 2),
			b.putNodePool("create-np2", "create node pool", "np2", succeeded, 1),
			b.putExternalAuth("create-ea1", "create external auth", "ea1", succeeded, "soak"),
		},
		{b.requestCredential("request-credential")},
		{
			b.putCluster("update", "update cluster", succeeded, map[string]string{"soak": b.name, "updated": "yes"}),
			b.putNodePool("update-np1", "update node pool", "np1", succeeded, 3),
			b.putExternalAuth("update-ea1", "update external auth", "ea1", succeeded, "soak-updated"),
		},
		{b.revokeCredentials("revoke-credentials")},
		{
			b.del("delete-np1", "delete node pool", b.nodePoolID("np1"), succeeded),
			b.del("delete-ea1", "delete external auth", b.externalAuthID("ea1"), succeeded),
		},
		// np2 goes with the cluster, by an implicit delete.
		{b.del("delete", "delete cluster", b.clusterID(), succeeded)},
	}
}

// makePlan builds scenarios until they hold at least ops requests, their
// starts spread evenly over spread. Subscriptions come from rng, so a
// seed repeats the plan.
func makePlan(ops int, spread time.Duration, sick sickPlan, rng *rand.Rand) []scenario {
	var plan []scenario
	total := 0
	for i, healthy := 0, 0; total < ops; i++ {
		shape, isSick := sick.shape(i)
		if !isSick {
			shape = shapeCycle[healthy%len(shapeCycle)]
			healthy++
		}
		sub := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
		name := fmt.Sprintf("c%03d", i)
		b := builder{ids: ids{subscription: sub, cluster: "soak-" + name + "-" + shape}, name: name, sick: sick}
		sc := scenario{name: name, cluster: b.cluster, shape: shape, subscription: sub, stages: build(shape, b, rng)}
		plan = append(plan, sc)
		total += sc.requests()
	}
	for i := range plan {
		plan[i].start = spread * time.Duration(i) / time.Duration(len(plan))
	}
	return plan
}

// sickObjects names the plan's sick subset.
func sickObjects(plan []scenario) sickSet {
	out := sickSet{clusters: map[string]sickness{}, pools: map[string]sickness{}}
	for _, sc := range plan {
		switch s, ok := shapeSickness[sc.shape]; {
		case sc.shape == shapeSickPool:
			out.pools[sickPoolName(sc.name)] = s
		case ok:
			out.clusters[sc.cluster] = s
		}
	}
	return out
}
