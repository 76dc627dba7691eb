package csfake

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/simulator"
	"github.com/hcpops/hcpops/internal/testsupport"
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
	clk := testsupport.NewClock(time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC))
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
