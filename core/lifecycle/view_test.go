package lifecycle

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// The tick's view of the active set (source.go, package activeset): what a
// tick reads, and that what it decides stays right whoever else writes.

// reads is what one call cost the store, in documents.
type reads struct{ query, readMany, gets, feed int64 }

func (e *env) counting(f func()) reads {
	s := e.store
	q, m, g, fd := s.queryItems.Load(), s.readManyDocs.Load(), s.reads.Load(), s.feedItems.Load()
	f()
	return reads{s.queryItems.Load() - q, s.readManyDocs.Load() - m, s.reads.Load() - g, s.feedItems.Load() - fd}
}

// tickOn runs one tick of eng and returns its result and what it read.
func (e *env) tickOn(t *testing.T, eng *Engine) (TickResult, reads) {
	t.Helper()
	var res TickResult
	r := e.counting(func() {
		var err error
		if res, err = eng.Tick(context.Background()); err != nil {
			t.Fatalf("Tick: %v", err)
		}
	})
	return res, r
}

// editRaw is another writer's read-modify-write of a document, as JSON.
func (e *env) editRaw(t *testing.T, id string, edit func(map[string]any)) {
	t.Helper()
	ctx := context.Background()
	it, err := e.store.Store.Get(ctx, testPK, id)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(it.Body, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Store.Replace(ctx, testPK, id, body, it.ETag); err != nil {
		t.Fatal(err)
	}
}

func opID(name string) string { return document.CosmosID(document.OperationResourceID(testSub, name)) }

func TestUnchangedTickReadsNothingButTheFeed(t *testing.T) {
	e := newEnv(t)
	var ops []string
	for _, n := range []string{"one", "two", "three"} {
		ops = append(ops, e.create(t, document.KindCluster, clusterRID(n), request{}))
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	first, r1 := e.tickOn(t, e.engine)
	if first.Polled != 3 || r1.query != 3 || r1.readMany != 3 {
		t.Fatalf("first tick = %+v reading %+v; want the 3 operations and their 3 clusters read in full", first, r1)
	}
	if !strings.Contains(e.logs.String(), MsgViewRebuilt) || !strings.Contains(e.logs.String(), "reason=start") {
		t.Errorf("the first tick did not log %q with reason start", MsgViewRebuilt)
	}
	second, r2 := e.tickOn(t, e.engine) // reads what the first wrote
	if second.Polled != 3 || r2.query != 0 || r2.readMany != 0 || r2.gets != 0 || r2.feed != int64(2*first.Changed) {
		t.Errorf("second tick = %+v reading %+v; want the %d documents the first tick wrote, from the feed, and nothing else",
			second, r2, 2*first.Changed)
	}
	third, r3 := e.tickOn(t, e.engine)
	if third.Polled != 3 || third.Changed != 0 || (r3 != reads{}) {
		t.Errorf("unchanged tick = %+v reading %+v; want nothing read", third, r3)
	}
	e.drive(t, ops...)
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	}
}

// A second instance finishes an operation and the frontend submits
// another between two of this instance's ticks: the next tick sees both,
// reading only those documents, and neither polls nor notifies the
// finished one again.
func TestAnotherWritersChangeIsSeenByTheNextTick(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, document.KindCluster, clusterRID("a"), request{notify: true})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	e.tick(t)

	other := e.newEngine(t)
	e.clk.Advance(10 * time.Minute) // CS has finished installing
	for i := 0; i < 3 && e.op(t, a).Properties.NotificationURI != ""; i++ {
		if _, err := other.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	e.wantOp(t, a, arm.ProvisioningStateSucceeded, "")
	if n := len(e.sink.calls(a)); n != 1 {
		t.Fatalf("ARM was notified %d times by the other instance, want 1", n)
	}
	b := e.create(t, document.KindCluster, clusterRID("b"), request{})

	res, r := e.tickOn(t, e.engine)
	if res.Polled != 1 || res.Notified != 0 || r.query != 0 || r.readMany != 0 {
		t.Errorf("tick = %+v reading %+v; want only b polled, a neither polled nor notified, nothing read in full", res, r)
	}
	if n := len(e.sink.calls(a)); n != 1 {
		t.Errorf("ARM was notified %d times, want once: this instance's view must have seen the other's write", n)
	}
	if st := e.engine.view.Stats(); st.Operations != 1 {
		t.Errorf("view holds %+v, want b alone", st)
	}
	e.drive(t, b)
}

// The view goes stale between its refresh and a write: another writer
// edits the operation's cluster (and the operation) just after this tick
// read the feed. The status write meets a 412, re-reads both documents
// and writes again, keeping what the other writer wrote.
func TestStaleViewMeetsPreconditionFailed(t *testing.T) {
	e := newEnv(t)
	op := e.create(t, document.KindCluster, clusterRID("a"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	e.tick(t)
	e.clk.Advance(10 * time.Minute)

	var edited atomic.Bool
	e.store.setFeedHook(func(p store.FeedPage) {
		if len(p.Items) == 0 && edited.CompareAndSwap(false, true) { // the tick's drain has ended
			e.editRaw(t, document.CosmosID(clusterRID("a")), func(m map[string]any) {
				m["properties"].(map[string]any)["tags"] = map[string]any{"owner": "someone else"}
			})
			e.editRaw(t, opID(op), func(m map[string]any) { m["frontendNote"] = "kept" })
		}
	})
	var batches, refused atomic.Int64
	e.store.setHook(func(ctx context.Context, phase hookPhase, w write) error {
		if w.kind == "Batch" && phase == beforeWrite {
			batches.Add(1)
		}
		return nil
	})
	res, r := e.tickOn(t, e.engine)
	e.store.setFeedHook(nil)
	e.store.setHook(nil)
	if !edited.Load() {
		t.Fatal("the other writer never wrote: the test proves nothing")
	}
	refused.Store(batches.Load() - 1)
	if res.Changed != 1 || refused.Load() != 1 || r.gets < 2 {
		t.Errorf("tick = %+v with %d batches and %d point reads; want one write refused (412), both documents re-read, one written",
			res, batches.Load(), r.gets)
	}
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	raw := e.rawResource(t, clusterRID("a"))
	props := raw["properties"].(map[string]any)
	if tags, _ := props["tags"].(map[string]any); tags["owner"] != "someone else" {
		t.Errorf("cluster tags = %v; the other writer's edit was lost", props["tags"])
	}
	if got := e.resource(t, clusterRID("a")).ProvisioningState(); got != arm.ProvisioningStateSucceeded {
		t.Errorf("cluster provisioningState = %s, want Succeeded", got)
	}
	it, err := e.store.Store.Get(context.Background(), testPK, opID(op))
	if err != nil || !strings.Contains(string(it.Body), `"frontendNote":"kept"`) {
		t.Errorf("operation document lost the other writer's member: %s (%v)", it.Body, err)
	}
}

// A continuation the store refuses costs one full read, then the view
// serves again.
func TestFeedGapFallsBackToAFullRead(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, document.KindCluster, clusterRID("a"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	e.tick(t)
	b := e.create(t, document.KindCluster, clusterRID("b"), request{})
	e.store.feedGap.Store(true)
	res, r := e.tickOn(t, e.engine)
	if res.Polled != 2 || r.query != 2 || r.readMany != 2 {
		t.Errorf("tick after a gap = %+v reading %+v; want both operations and clusters read in full", res, r)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "lost its place in the change feed") || !strings.Contains(logs, "gap=true") ||
		!strings.Contains(logs, "reason=feed_lost") {
		t.Errorf("the gap was not logged as such:\n%s", logs)
	}
	res, r = e.tickOn(t, e.engine)
	if res.Polled != 2 || r.query != 0 || r.readMany != 0 {
		t.Errorf("tick after the rebuild = %+v reading %+v; want the view serving again", res, r)
	}
	e.drive(t, a, b)
}

// A soft-deleted operation and an expired one leave the view, though the
// feed says nothing of the expiry.
func TestDeletedAndExpiredOperationsLeaveTheView(t *testing.T) {
	e := newEnv(t)
	keep := e.create(t, document.KindCluster, clusterRID("keep"), request{})
	gone := e.create(t, document.KindCluster, clusterRID("gone"), request{})
	short := e.create(t, document.KindCluster, clusterRID("short"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	e.tick(t)
	if err := e.store.Store.SoftDelete(context.Background(), testPK, opID(gone)); err != nil {
		t.Fatal(err)
	}
	e.editRaw(t, opID(short), func(m map[string]any) { m["ttl"] = 30 })
	res, _ := e.tickOn(t, e.engine)
	if res.Polled != 2 {
		t.Errorf("tick after a soft delete = %+v, want 2 polled", res)
	}
	e.clk.Advance(31 * time.Second)
	res, r := e.tickOn(t, e.engine)
	if res.Polled != 1 || r.feed != 0 || r.query != 0 {
		t.Errorf("tick after the ttl ran out = %+v reading %+v; want only %s polled, from the view", res, r, keep)
	}
	if st := e.engine.view.Stats(); st.Operations != 1 || st.Resources != 1 {
		t.Errorf("view holds %+v, want one operation and its cluster", st)
	}
}

// A restarted instance (a new engine on the same store) starts with a
// full read; two instances ticking in turn each see the other's writes.
func TestRestartAndTwoInstances(t *testing.T) {
	e := newEnv(t)
	var ops []string
	for _, n := range []string{"a", "b", "c", "d"} {
		ops = append(ops, e.create(t, document.KindCluster, clusterRID(n), request{notify: true}))
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	restarted := e.newEngine(t)
	res, r := e.tickOn(t, restarted)
	if res.Polled != 4 || r.query != 4 {
		t.Errorf("first tick after a restart = %+v reading %+v; want a full read", res, r)
	}
	engines := []*Engine{e.engine, restarted}
	for round := 0; round < 20; round++ {
		done := true
		for _, op := range ops {
			if o := e.op(t, op); !o.Properties.Status.IsTerminal() || o.Properties.NotificationURI != "" {
				done = false
			}
		}
		if done {
			break
		}
		if _, err := engines[round%2].Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Minute)
	}
	for _, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		if n := len(e.sink.calls(op)); n != 1 {
			t.Errorf("operation %s notified %d times, want once", op, n)
		}
	}
}

// The view hands the tick a resource's projection: the members a poll
// reads. A status write from it reads the resource whole first, once, so
// members hcpops does not model (here one another writer added after the
// view was built) are written back as they are.
func TestAWriteFromTheViewReadsTheResourceWhole(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, document.KindCluster, clusterRID("a"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	e.tick(t)
	cid := document.CosmosID(clusterRID("a"))
	e.editRaw(t, cid, func(m map[string]any) {
		m["properties"].(map[string]any)["futureMember"] = map[string]any{"kept": true}
	})
	if res, r := e.tickOn(t, e.engine); res.Changed != 0 || r.gets != 0 || r.feed != 1 {
		t.Fatalf("tick after another writer = %+v reading %+v; want the change from the feed, nothing else", res, r)
	}
	e.clk.Advance(10 * time.Minute) // CS has finished installing
	res, r := e.tickOn(t, e.engine)
	// Two point reads: the cluster, whole, for its status write, and its
	// serviceProviderClusters document, where the active version goes.
	if res.Changed != 1 || r.gets != 2 || r.readMany != 0 || r.query != 0 {
		t.Fatalf("tick that finishes the create = %+v reading %+v; want one change and two point reads (the cluster, whole, and its service-provider document)", res, r)
	}
	e.wantOp(t, a, arm.ProvisioningStateSucceeded, "")
	it, err := e.store.Store.Get(context.Background(), testPK, cid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(it.Body), `"futureMember":{"kept":true}`) {
		t.Errorf("the cluster as written lost a member it does not model:\n%s", it.Body)
	}
	if got := e.resource(t, clusterRID("a")).ProvisioningState(); got != arm.ProvisioningStateSucceeded {
		t.Errorf("cluster provisioningState = %s, want Succeeded", got)
	}
}

// A document that no longer parses is held as it was read: each tick says
// what is wrong with it, as a tick that read the store would, and reads
// nothing more for it.
func TestUnparsableDocumentsFromTheViewAreReportedEveryTick(t *testing.T) {
	e := newEnv(t)
	e.create(t, document.KindCluster, clusterRID("a"), request{})
	b := e.create(t, document.KindCluster, clusterRID("b"), request{})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	e.tick(t)
	e.editRaw(t, document.CosmosID(clusterRID("a")), func(m map[string]any) {
		m["properties"].(map[string]any)["serviceProviderProperties"].(map[string]any)["provisioningState"] = 7
	})
	e.editRaw(t, opID(b), func(m map[string]any) {
		m["properties"].(map[string]any)["request"] = "Bogus"
	})
	for i, wantFeed := range []int64{2, 0} {
		res, r := e.tickOn(t, e.engine)
		if res.SkippedReasons[SkipResourceUnreadable] != 1 || res.Errors != 1 {
			t.Errorf("tick %d = %+v; want a's cluster skipped as unreadable and b counted an error", i, res)
		}
		if r != (reads{feed: wantFeed}) {
			t.Errorf("tick %d read %+v; want only the %d changes from the feed", i, r, wantFeed)
		}
	}
}
