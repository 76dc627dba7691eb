package csfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/simulator/simtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

const clusterID = "2b4c6d8e0f2h4j6l8n0p2r4t6v8a0c2e"

func spec() cs.ClusterSpec {
	return cs.ClusterSpec{ID: clusterID, Name: "c1", Region: "eastus", VersionID: "4.20", ChannelGroup: "stable",
		Azure: cs.AzureRef{SubscriptionID: "s", ResourceGroupName: "rg", ResourceName: "c1"}}
}

// The client of the fake sees the simulator's state machine on the test's
// clock, its refusals as CS errors, and its ledger counts the requests.
func TestClientMeetsTheSimulator(t *testing.T) {
	ctx := context.Background()
	clk := testsupport.NewClock(testsupport.Epoch())
	d := simulator.DefaultDurations()
	f := New(t, Config{}, simulator.WithClock(clk), simulator.WithDurations(d))
	c, err := f.Client.PostCluster(ctx, spec())
	if err != nil {
		t.Fatalf("PostCluster: %v", err)
	}
	if c.Href != cs.ClusterHref(clusterID) || c.Status.State != cs.ClusterStateValidating {
		t.Fatalf("created %+v, want %s validating", c, cs.ClusterHref(clusterID))
	}
	_, err = f.Client.PostCluster(ctx, spec())
	if cs.Classify(err) != cs.Exists {
		t.Errorf("a second create: %v (%s), want CS's 409", err, cs.Classify(err))
	}
	clk.Advance(d.ClusterValidating + d.ClusterPending + d.ClusterInstalling)
	st, err := f.Client.GetClusterStatus(ctx, c.Href)
	if err != nil || st.State != cs.ClusterStateReady {
		t.Errorf("status after installing: %+v, %v; want ready", st, err)
	}
	if n := f.Sim.Ledger().Count(http.MethodPost, cs.ClustersPath); n != 2 {
		t.Errorf("ledger: %d cluster POSTs, want 2", n)
	}
}

// A hung request waits for its context: the client's timeout ends it, on
// a bubble's fake clock in no real time, and the other requests go on.
func TestHangWaitsForTheContext(t *testing.T) {
	start := time.Now()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f := New(t, Config{Timeout: time.Minute})
		if _, err := f.Client.PostCluster(ctx, spec()); err != nil {
			t.Fatalf("PostCluster: %v", err)
		}
		f.Hangs.Hang(clusterID)
		before := time.Now()
		_, err := f.Client.GetCluster(ctx, cs.ClusterHref(clusterID))
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(before) != time.Minute {
			t.Errorf("a hung GET: %v after %s, want the 1m call timeout", err, time.Since(before))
		}
		if f.Hangs.HeldFor(clusterID) != 1 {
			t.Errorf("held %d requests about the cluster, want 1", f.Hangs.HeldFor(clusterID))
		}
		if _, err := f.Client.ListClusters(ctx, "azure.resource_name = 'other'"); err != nil {
			t.Errorf("a list that names no sick key: %v", err)
		}
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a minute's hang took %s of real time", took)
	}
}

// TestSameAnswersAsOverASocket is csfake's contract: one scenario (every
// kind created, read, listed by href, changed and deleted, a refusal, an
// injected fault, a search) played against the fake and against the
// simulator on a loopback socket reached by the same client gives the
// same answers and the same ledger. What the fake leaves out is the
// network, and nothing the client reads of CS.
func TestSameAnswersAsOverASocket(t *testing.T) {
	run := func(t *testing.T, sim *simulator.Simulator, c *ocm.Client, clk *testsupport.Clock) []string {
		ctx := context.Background()
		var out []string
		note := func(what string, v any, err error) {
			out = append(out, fmt.Sprintf("%s: %+v %v", what, v, err))
		}
		href := cs.ClusterHref(clusterID)
		cl, err := c.PostCluster(ctx, spec())
		note("post cluster", cl, err)
		_, err = c.PostCluster(ctx, spec())
		note("post again", cs.Classify(err), err)
		_, err = c.PostNodePool(ctx, href, cs.NodePoolSpec{ID: "np1", Replicas: 2})
		note("pool on a cluster not ready", cs.Classify(err), err)
		clk.Advance(time.Hour)
		np, err := c.PostNodePool(ctx, href, cs.NodePoolSpec{ID: "np1", Replicas: 2, Labels: map[string]string{"a": "b"}})
		note("post pool", np, err)
		ea, err := c.PostExternalAuth(ctx, href, cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://issuer", Audiences: []string{"x"}})
		note("post auth", ea, err)
		byHref, err := c.ListClustersByHref(ctx, []string{href, cs.ClusterHref("00000000000000000000000000000000")})
		note("clusters by href", byHref, err)
		pools, err := c.ListNodePoolsByHref(ctx, href, []string{cs.NodePoolHref(href, "np1")})
		note("pools by href", pools, err)
		found, err := c.ListClusters(ctx, "azure.subscription_id = 's' and azure.resource_group_name = 'rg' and azure.resource_name = 'c1'")
		note("adoption search", found, err)
		must(t, sim.FailNext(1, 503))
		_, err = c.GetClusterStatus(ctx, href)
		note("an injected 503", cs.Classify(err), err)
		replicas := 3
		np, err = c.PatchNodePool(ctx, cs.NodePoolHref(href, "np1"), cs.NodePoolPatch{Replicas: &replicas})
		note("patch pool", np, err)
		cred, err := c.PostBreakGlassCredential(ctx, href)
		note("post credential", cred.Status, err)
		note("delete cluster", nil, c.DeleteCluster(ctx, href))
		st, err := c.GetClusterStatus(ctx, href)
		note("status while uninstalling", st, err)
		clk.Advance(time.Hour)
		_, err = c.GetCluster(ctx, href)
		note("gone", cs.Classify(err), err)
		l := sim.Ledger()
		note("ledger", []any{l.ByPattern, l.Faults, l.ListCalls()}, nil)
		return out
	}
	start := testsupport.Epoch()
	memClk := testsupport.NewClock(start)
	f := New(t, Config{}, simulator.WithClock(memClk))
	inMemory := run(t, f.Sim, f.Client, memClk)

	netClk := testsupport.NewClock(start)
	sim, url := simtest.Start(t, simulator.WithClock(netClk))
	c, err := ocm.New(context.Background(), ocm.Config{URL: url, RetryLimit: 0, Timeout: 10 * time.Second}, nil)
	must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	overSocket := run(t, sim, c, netClk)

	for i := range max(len(inMemory), len(overSocket)) {
		var a, b string
		if i < len(inMemory) {
			a = inMemory[i]
		}
		if i < len(overSocket) {
			b = overSocket[i]
		}
		if a != b {
			t.Errorf("step %d differs:\n in memory:   %s\n over socket: %s", i, a, b)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
