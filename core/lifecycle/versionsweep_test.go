package lifecycle

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/simulator"
)

func sweeping(c *Config) { c.SweepVersions = true }

// spDoc reads the service-provider document of rid as a JSON object; nil
// when there is none.
func spDoc(t *testing.T, e *env, rid, segment string) map[string]any {
	t.Helper()
	item, err := e.store.Get(context.Background(), testPK, document.CosmosID(rid+segment))
	if err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(item.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func spStatus(doc map[string]any) map[string]any {
	if doc == nil {
		return nil
	}
	st, _ := doc["properties"].(map[string]any)["status"].(map[string]any)
	return st
}

func channelsOf(doc map[string]any) []string {
	var out []string
	list, _ := spStatus(doc)["desiredVersionChannels"].([]any)
	for _, c := range list {
		out = append(out, c.(string))
	}
	return out
}

const (
	spCluster  = "/serviceProviderClusters/default"
	spNodePool = "/serviceProviderNodePools/default"
)

// TestSweepBackfillsClustersThatExistedBefore: a cluster whose
// service-provider document the frontend wrote without status (created
// before hcpops wrote them) and a node pool with none get their versions
// from CS on the first ticks, with no update of their own, and the
// cluster's channel list in upstream's shape; every member the frontend
// wrote is kept.
func TestSweepBackfillsClustersThatExistedBefore(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	np := nodePoolRID("c1", "np1")
	e.drive(t, e.create(t, document.KindNodePool, np, request{}))
	ctx := context.Background()
	// As before hcpops wrote them: the cluster's as the frontend writes
	// it, without status; the node pool's missing.
	cid := document.CosmosID(clusterRID("c1") + spCluster)
	old, err := e.store.Get(ctx, testPK, cid)
	if err != nil {
		t.Fatal(err)
	}
	bare := `{"id":"` + cid + `","partitionKey":"` + testPK + `","resourceID":"` + clusterRID("c1") + spCluster +
		`","resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters","properties":{"cosmosMetadata":` +
		`{"resourceID":"` + clusterRID("c1") + spCluster + `","instanceVersion":4,"partitionKey":"` + testPK + `"},` +
		`"spec":{"control_plane_version":{"desired_version":"4.20.3"}}}}`
	if _, err := e.store.Replace(ctx, testPK, cid, []byte(bare), old.ETag); err != nil {
		t.Fatal(err)
	}
	drop(t, e, np+spNodePool)
	if spStatus(spDoc(t, e, clusterRID("c1"), spCluster)) != nil || spDoc(t, e, np, spNodePool) != nil {
		t.Fatal("the documents were not reset")
	}

	sweeper := e.newEngineWith(t, sweeping)
	for range 5 {
		if _, err := sweeper.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c := spDoc(t, e, clusterRID("c1"), spCluster)
	av, _ := spStatus(c)["control_plane_version"].(map[string]any)["active_versions"].([]any)
	if len(av) != 1 || av[0].(map[string]any)["version"] != "4.20.25" {
		t.Errorf("cluster active versions = %v, want [4.20.25] (what CS runs)", av)
	}
	if got, want := channelsOf(c), []string{"stable-4.20", "stable-4.21"}; !slices.Equal(got, want) {
		t.Errorf("desiredVersionChannels = %q, want %q", got, want)
	}
	spec, _ := c["properties"].(map[string]any)["spec"].(map[string]any)
	if spec == nil || spec["control_plane_version"] == nil {
		t.Errorf("the frontend's spec was not kept: %v", c["properties"])
	}
	live, err := e.cs.GetNodePool(ctx, e.resource(t, np).ClusterServiceID())
	if err != nil {
		t.Fatal(err)
	}
	n := spStatus(spDoc(t, e, np, spNodePool))
	nv, _ := n["nodePoolVersion"].(map[string]any)["activeVersions"].([]any)
	if len(nv) != 1 || nv[0].(map[string]any)["version"] != live.Version {
		t.Errorf("node pool active versions = %v, want [%s]", nv, live.Version)
	}
}

// TestSweepKeepsChannelsCurrent: an upgrade path CS starts offering
// appears in the channel list on the next pass, and one it stops
// offering disappears; with nothing changed, nothing is written.
func TestSweepKeepsChannelsCurrent(t *testing.T) {
	e := newEnv(t, sweeping)
	e.readyCluster(t, "c1")
	ctx := context.Background()
	pass := func() {
		t.Helper()
		e.clk.Advance(DefaultVersionSweepInterval)
		for range 5 {
			if _, err := e.engine.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	pass()
	if got := channelsOf(spDoc(t, e, clusterRID("c1"), spCluster)); !slices.Equal(got, []string{"stable-4.20", "stable-4.21"}) {
		t.Fatalf("channels = %q", got)
	}
	vs := simulator.DefaultVersions()
	for i := range vs {
		if vs[i].RawID == "4.20.25" && vs[i].ChannelGroup == "stable" {
			vs[i].AvailableUpgrades = append(vs[i].AvailableUpgrades, "4.22.1")
		}
	}
	vs = append(vs, cs.Version{ID: "openshift-v4.20.25-candidate", RawID: "4.20.25", ChannelGroup: "candidate", Enabled: true,
		AvailableUpgrades: []string{"4.22.1"}})
	e.sim.SetVersions(vs)
	pass()
	want := []string{"candidate-4.20", "candidate-4.22", "stable-4.20", "stable-4.21", "stable-4.22"}
	if got := channelsOf(spDoc(t, e, clusterRID("c1"), spCluster)); !slices.Equal(got, want) {
		t.Errorf("after CS offered 4.22: channels = %q, want %q", got, want)
	}
	// CS stops offering any upgrade from 4.20.25: only its own line is left.
	for i := range vs {
		if vs[i].RawID == "4.20.25" {
			vs[i].AvailableUpgrades = nil
		}
	}
	e.sim.SetVersions(vs)
	pass()
	want = []string{"candidate-4.20", "stable-4.20"}
	if got := channelsOf(spDoc(t, e, clusterRID("c1"), spCluster)); !slices.Equal(got, want) {
		t.Errorf("after CS withdrew the upgrades: channels = %q, want %q", got, want)
	}
	before := e.store.writes.Load()
	pass()
	if n := e.store.writes.Load() - before; n != 0 {
		t.Errorf("a pass with nothing changed wrote %d documents", n)
	}
	// Caught up, between passes: nothing written, no CS request.
	e.sim.ResetLedger()
	e.clk.Advance(10 * time.Second)
	if _, err := e.engine.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.sim.Ledger().Total(); n != 0 {
		t.Errorf("a tick between passes with nothing written made %d CS requests", n)
	}
}

// TestSweepCost: the sweep's cost, measured against the simulator's
// ledger: 20 clusters with a node pool each, backfilled from nothing in
// pages of 10 documents.
func TestSweepCost(t *testing.T) {
	e := newEnv(t)
	const n = 20
	var ops []string
	for i := range n {
		ops = append(ops, e.create(t, document.KindCluster, clusterRID("c"+strings.Repeat("x", i)), request{}))
	}
	e.drive(t, ops...)
	ops = ops[:0]
	for i := range n {
		ops = append(ops, e.create(t, document.KindNodePool, nodePoolRID("c"+strings.Repeat("x", i), "np1"), request{}))
	}
	e.drive(t, ops...)
	ctx := context.Background()
	for i := range n {
		drop(t, e, clusterRID("c"+strings.Repeat("x", i))+spCluster)
		drop(t, e, nodePoolRID("c"+strings.Repeat("x", i), "np1")+spNodePool)
	}
	// Pages of 10: the pass spans ticks, and CS's versions are read once.
	sweeper := e.newEngineWith(t, sweeping, func(c *Config) { c.VersionSweepPageSize = 10 })
	e.sim.ResetLedger()
	ticks, written := 0, 0
	for written < 2*n && ticks < 50 {
		res, err := sweeper.Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ticks++
		written += res.VersionsRecorded
	}
	l := e.sim.Ledger()
	t.Logf("%d clusters and %d node pools backfilled in %d ticks, %d CS requests (%d versions lists)",
		n, n, ticks, l.Total(), l.Count("GET", simulator.VersionsPath))
	if written != 2*n {
		t.Fatalf("%d documents written in %d ticks, want %d", written, ticks, 2*n)
	}
	// One versions list, at most a cluster list a tick, a node pool list
	// per cluster.
	if lists := l.Count("GET", simulator.VersionsPath); lists != 1 {
		t.Errorf("%d versions lists in %d ticks of one minute, want 1", lists, ticks)
	}
	if total := l.Total(); total > 1+ticks+n {
		t.Errorf("%d CS requests, want at most %d", total, 1+ticks+n)
	}
}

// newEngineWith is another engine on the same store and CS, with the
// env's config tweaked.
func (e *env) newEngineWith(t *testing.T, tweak ...func(*Config)) *Engine {
	t.Helper()
	cfg := e.cfg
	for _, f := range tweak {
		f(&cfg)
	}
	saved := e.cfg
	e.cfg = cfg
	defer func() { e.cfg = saved }()
	return e.newEngine(t)
}

// drop removes the document of rid, as if it had never been written.
func drop(t *testing.T, e *env, rid string) {
	t.Helper()
	ctx := context.Background()
	item, err := e.store.Get(ctx, testPK, document.CosmosID(rid))
	if err != nil {
		t.Fatalf("reading %s: %v", rid, err)
	}
	if _, err := e.store.Batch(ctx, testPK, []store.BatchOp{{Kind: store.OpDelete, ID: document.CosmosID(rid), IfMatch: item.ETag}}); err != nil {
		t.Fatal(err)
	}
}

// TestSweepDoesNotReviveADeletedCluster: a cluster deleted after the sweep
// read its page gets no service-provider document back.
func TestSweepDoesNotReviveADeletedCluster(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	drop(t, e, clusterRID("c1")+spCluster)
	ctx := context.Background()
	var once bool
	e.store.mu.Lock()
	e.store.feedHook = func(store.FeedPage) {
		if once {
			return
		}
		once = true
		if err := e.store.Store.SoftDelete(ctx, testPK, document.CosmosID(clusterRID("c1"))); err != nil {
			t.Errorf("soft delete: %v", err)
		}
	}
	e.store.mu.Unlock()
	sweeper := e.newEngineWith(t, sweeping)
	for range 3 {
		if _, err := sweeper.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !once {
		t.Fatal("the sweep read no page")
	}
	if doc := spDoc(t, e, clusterRID("c1"), spCluster); doc != nil {
		t.Errorf("the deleted cluster's service-provider document came back: %v", doc)
	}
}
