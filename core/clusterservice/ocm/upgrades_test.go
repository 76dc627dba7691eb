package ocm

import (
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

// upgradeCluster posts a cluster at 4.20 (the simulator runs it at
// 4.20.25) with a node pool at 4.20.8 and waits until both are ready.
func (e *env) upgradeCluster(t *testing.T) (clusterHref, nodePoolHref string) {
	t.Helper()
	spec := clusterSpec(7)
	spec.VersionID = "4.20"
	c, err := e.client.PostCluster(e.ctx, spec)
	if err != nil {
		t.Fatalf("PostCluster: %v", err)
	}
	e.clock.Advance(3 * time.Minute)
	np := nodePoolSpec()
	np.VersionID = "openshift-v4.20.8"
	if _, err := e.client.PostNodePool(e.ctx, c.Href, np); err != nil {
		t.Fatalf("PostNodePool: %v", err)
	}
	e.clock.Advance(3 * time.Minute)
	return c.Href, cs.NodePoolHref(c.Href, np.ID)
}

// TestUpgradePoliciesThroughTheClient: the simulator's upgrade policies
// are state machines the client reads (scheduled, started, completed or
// failed with CS's description), the object reports its new version only
// once the policy completed, and CS's refusals (no upgrade path, a second
// policy under way, a node pool above its control plane) are 400s.
func TestUpgradePoliciesThroughTheClient(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch, nph := e.upgradeCluster(t)
	if c, err := e.client.GetCluster(e.ctx, ch); err != nil || c.Version != "4.20.25" {
		t.Fatalf("cluster posted at 4.20 runs %q, %v; want the newest 4.20 z-stream, 4.20.25", c.Version, err)
	}

	_, err := e.client.PostControlPlaneUpgradePolicy(e.ctx, ch, "4.22.1")
	wantCSError(t, err, 400, "no upgrade path")
	_, err = e.client.PostNodePoolUpgradePolicy(e.ctx, nph, "4.21.20")
	wantCSError(t, err, 400, "newer than its control plane")

	p, err := e.client.PostControlPlaneUpgradePolicy(e.ctx, ch, "4.21.20")
	if err != nil || p.Version != "4.21.20" || p.State != cs.UpgradePolicyStateScheduled {
		t.Fatalf("posted policy = %+v, %v; want 4.21.20 scheduled", p, err)
	}
	_, err = e.client.PostControlPlaneUpgradePolicy(e.ctx, ch, "4.21.20")
	wantCSError(t, err, 400, "already an upgrade policy")

	for _, step := range []struct {
		advance time.Duration
		state   string
		version string
	}{
		{0, cs.UpgradePolicyStateScheduled, "4.20.25"},
		{time.Minute, cs.UpgradePolicyStateStarted, "4.20.25"},
		{time.Minute, cs.UpgradePolicyStateCompleted, "4.21.20"},
	} {
		e.clock.Advance(step.advance)
		ps, err := e.client.ListControlPlaneUpgradePolicies(e.ctx, ch)
		newest, ok := cs.Newest(ps)
		if err != nil || !ok || newest.ID != p.ID || newest.State != step.state {
			t.Fatalf("policies = %+v, %v; want %s", ps, err, step.state)
		}
		c, err := e.client.GetCluster(e.ctx, ch)
		if err != nil || c.Version != step.version {
			t.Errorf("with the policy %s the cluster runs %q, %v; want %s", step.state, c.Version, err, step.version)
		}
	}

	// The node pool: armed to fail, its upgrade ends failed with the
	// description, and it keeps its version.
	if _, err := e.sim.FailUpgrade("cluster-7", "np1", simulator.UpgradeFailure{Message: "nodes did not drain"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PostNodePoolUpgradePolicy(e.ctx, nph, "4.20.10"); err != nil {
		t.Fatalf("PostNodePoolUpgradePolicy: %v", err)
	}
	e.clock.Advance(2 * time.Minute)
	ps, err := e.client.ListNodePoolUpgradePolicies(e.ctx, nph)
	newest, _ := cs.Newest(ps)
	if err != nil || newest.State != cs.UpgradePolicyStateFailed || newest.Description != "nodes did not drain" {
		t.Fatalf("node pool policies = %+v, %v; want failed with the armed description", ps, err)
	}
	if np, err := e.client.GetNodePool(e.ctx, nph); err != nil || np.Version != "4.20.8" {
		t.Errorf("after a failed upgrade the node pool runs %q, %v; want 4.20.8", np.Version, err)
	}
	// A second try succeeds.
	if _, err := e.client.PostNodePoolUpgradePolicy(e.ctx, nph, "4.20.10"); err != nil {
		t.Fatalf("PostNodePoolUpgradePolicy again: %v", err)
	}
	e.clock.Advance(2 * time.Minute)
	if np, err := e.client.GetNodePool(e.ctx, nph); err != nil || np.Version != "4.20.10" {
		t.Errorf("after the upgrade the node pool runs %q, %v; want 4.20.10", np.Version, err)
	}
}
