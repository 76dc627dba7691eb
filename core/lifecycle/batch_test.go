package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// TestOneListPerBatch: a tick reads a page's clusters with one list call
// per batch and their resources with one ReadMany per page, and makes no
// single-object GET; batch size 1 is one GET per operation, as before.
func TestOneListPerBatch(t *testing.T) {
	const n = 250
	for _, tc := range []struct {
		batch, lists, gets int
	}{
		{batch: 100, lists: 3, gets: 0}, // pages of 100, 100, 50
		{batch: 40, lists: 8, gets: 0},  // 3 + 3 + 2: batches never span pages
		{batch: 1, lists: 0, gets: n},
	} {
		t.Run(fmt.Sprintf("B=%d", tc.batch), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				e := newEnv(t, func(c *Config) { c.CSBatchSize, c.PageSize, c.PollConcurrency = tc.batch, 100, 8 })
				e.dispatchedClusters(t, "c", n) // installing after 5 minutes: Provisioning is due
				e.sim.ResetLedger()
				manys := e.store.readManys.Load()
				if res := e.tick(t); res.Polled != n || res.Changed != n || res.Errors != 0 {
					t.Fatalf("tick = %+v, want all %d polled and changed", res, n)
				}
				l := e.sim.Ledger()
				lists := l.Lists["GET "+cs.ClustersPath]
				gets := l.Count("GET", cs.ClustersPath+"/{id}/status")
				if lists.Calls != tc.lists || gets != tc.gets || (tc.batch > 1 && lists.IDs != n) {
					t.Errorf("CS saw %d lists naming %d ids and %d status GETs; want %d lists naming %d, and %d GETs",
						lists.Calls, lists.IDs, gets, tc.lists, n, tc.gets)
				}
				if lists.MaxIDs > tc.batch {
					t.Errorf("a list named %d ids, more than the batch size %d", lists.MaxIDs, tc.batch)
				}
				if got := e.store.readManys.Load() - manys; got != 3 {
					t.Errorf("%d ReadMany calls, want one per page (3)", got)
				}
			})
		})
	}
}

// TestBatchedTickMatchesPerObject runs one mixed workload (every kind,
// create, update and delete) with and without batching: every operation
// and resource ends the same, while the batched run asks CS fewer times.
func TestBatchedTickMatchesPerObject(t *testing.T) {
	run := func(batch int) (map[string]string, int) {
		e := newEnv(t, func(c *Config) { c.CSBatchSize = batch })
		e.readyCluster(t, "c1")
		e.readyCluster(t, "c2")
		ops := []string{
			e.create(t, document.KindCluster, clusterRID("c3"), request{notify: true}),
			e.update(t, clusterRID("c1"), request{}, func(s *spec) { s.cluster.NodeDrainTimeoutMinutes = new(30) }),
			e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}),
			e.create(t, document.KindNodePool, nodePoolRID("c1", "np2"), request{}),
			e.create(t, document.KindExternalAuth, externalAuthRID("c1", "entra"), request{}),
		}
		ops = append(ops, e.remove(t, clusterRID("c2"), request{notify: true})...)
		e.sim.ResetLedger()
		e.drive(t, ops...)
		got := map[string]string{}
		for _, name := range ops {
			op := e.op(t, name)
			code := ""
			if op.Properties.Error != nil {
				code = op.Properties.Error.Code
			}
			got[string(op.Properties.Request)+" "+lower(op.Properties.ExternalID)] = string(op.Properties.Status) + " " + code
		}
		for _, rid := range []string{clusterRID("c1"), clusterRID("c2"), clusterRID("c3"), nodePoolRID("c1", "np1"),
			nodePoolRID("c1", "np2"), externalAuthRID("c1", "entra")} {
			state := "gone"
			if r := e.resource(t, rid); r != nil {
				state = string(r.ProvisioningState())
			}
			got["resource "+lower(rid)] = state
		}
		return got, e.sim.Ledger().Total()
	}
	perObject, perObjectCalls := run(1)
	batched, batchedCalls := run(100)
	var diffs []string
	for k, v := range perObject {
		if batched[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: per object %q, batched %q", k, v, batched[k]))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 || len(batched) != len(perObject) {
		t.Errorf("batching changed the outcome:\n%s", strings.Join(diffs, "\n"))
	}
	if batchedCalls >= perObjectCalls {
		t.Errorf("batched run made %d CS requests, per-object %d; want fewer", batchedCalls, perObjectCalls)
	}
	t.Logf("CS requests: per object %d, batched %d", perObjectCalls, batchedCalls)
}

// TestSickObjectsInABatch is the hang's run with batching on: the list
// naming the two hung clusters times out, the four healthy ones are then
// read one by one and finish in the same tick, the sick ones are backed
// off alone and stay out of later lists.
func TestSickObjectsInABatch(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.PollConcurrency, c.PollBackoffBase = 2, 10*time.Minute })
		p := e.throughProxy(t, hungCallTimeout)
		names, ids := e.dispatchedClusters(t, "c", 6)
		sick, healthy := names[:2], names[2:]
		p.Hang(ids[sick[0]], ids[sick[1]])

		res := e.tickWithin(t, time.Minute)
		if res.Changed != 4 || res.Errors != 2 {
			t.Errorf("tick 1 = %+v, want 4 changed, 2 errors", res)
		}
		for _, n := range healthy {
			e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
		}
		for _, n := range sick {
			e.wantOp(t, n, arm.ProvisioningStateAccepted, "")
			if lines := e.logLines("clusters service call failed; operation backed off", n); len(lines) != 1 {
				t.Errorf("operation %s: %d failure lines, want 1", n, len(lines))
			}
		}
		if got := strings.Count(e.logs.String(), "batched clusters service read failed"); got != 1 {
			t.Errorf("%d warnings about the failed list, want 1", got)
		}
		// The list (held under the first sick id it names) and one GET each.
		held := p.HeldFor(ids[sick[0]]) + p.HeldFor(ids[sick[1]])
		if held != 3 {
			t.Errorf("tick 1 asked CS %d times about the sick ones, want the list and a GET each (3)", held)
		}

		more, _ := e.dispatchedClusters(t, "d", 3)
		res = e.tickWithin(t, time.Minute)
		for _, n := range more {
			e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
		}
		if res.BackedOff != 2 || res.Errors != 0 || p.HeldFor(ids[sick[0]])+p.HeldFor(ids[sick[1]]) != held {
			t.Errorf("tick 2 = %+v after %d calls about the sick ones; want 2 backed off, no errors, no new calls",
				res, p.HeldFor(ids[sick[0]])+p.HeldFor(ids[sick[1]]))
		}
	})
}

// TestBatchCutByTheBudget: a list that outlasts the tick's budget (a CS
// timeout longer than the budget) backs its operations off, so the next
// tick asks each alone, bounded by the CS timeout, instead of hanging on
// the same list again; past the deadline that unanswered read fails it.
func TestBatchCutByTheBudget(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.PollConcurrency = 1 })
		p := e.throughProxy(t, time.Minute)
		names, ids := e.dispatchedClusters(t, "c", 1)
		p.Hang(ids[names[0]])

		e.tickWithin(t, hungCallTimeout)
		e.wantOp(t, names[0], arm.ProvisioningStateAccepted, "")
		if _, ok := e.engine.pollAt.lookup(docRef(e.op(t, names[0]))); !ok || p.HeldFor(ids[names[0]]) != 1 {
			t.Fatalf("after the cut list (%d calls) the operation is not backed off", p.HeldFor(ids[names[0]]))
		}
		e.clk.Advance(2 * time.Hour) // past the 60m create deadline
		res := e.tickWithin(t, hungCallTimeout)
		if op := e.wantOp(t, names[0], arm.ProvisioningStateFailed, arm.CodeInternalServerError); !strings.Contains(op.Properties.Error.Message, "deadline") {
			t.Errorf("error %q does not name the deadline", op.Properties.Error.Message)
		}
		if res.Expired != 1 || p.HeldFor(ids[names[0]]) != 2 {
			t.Errorf("tick 2 = %+v after %d calls, want the expiry after one more call", res, p.HeldFor(ids[names[0]]))
		}
	})
}

// brokenReadMany is the real store with ReadMany failing, as a store
// that times out on the batched read would.
type brokenReadMany struct{ *recordingStore }

func (s brokenReadMany) ReadMany(context.Context, []store.DocRef) (map[store.DocRef]store.Item, error) {
	return nil, errors.New("read many: service unavailable")
}

// TestReadManyFailureFallsBack: a page whose batched resource read fails
// reads its resources one by one and finishes as usual, with one warning.
func TestReadManyFailureFallsBack(t *testing.T) {
	tick := func(broken bool) (*env, []string, int64) {
		e := newEnv(t)
		names, _ := e.dispatchedClusters(t, "c", 5)
		var s store.Store = e.store
		if broken {
			s = brokenReadMany{e.store}
		}
		eng, err := New(Deps{Store: s, ClusterService: e.cs, Calls: e.calls, Notifier: nopNotifier{}, Clock: e.clk,
			Logger: slog.New(slog.NewTextHandler(e.logs, nil))}, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		reads := e.store.reads.Load()
		res, err := eng.Tick(context.Background())
		if err != nil || res.Changed != 5 || res.Errors != 0 {
			t.Fatalf("tick = %+v, %v; want all 5 changed", res, err)
		}
		return e, names, e.store.reads.Load() - reads
	}
	_, _, healthyReads := tick(false)
	e, names, reads := tick(true)
	for _, n := range names {
		e.wantOp(t, n, arm.ProvisioningStateSucceeded, "")
	}
	if reads != healthyReads+5 {
		t.Errorf("%d point reads, want one per resource more than with ReadMany working (%d)", reads, healthyReads)
	}
	if got := strings.Count(e.logs.String(), "batched resource read failed"); got != 1 {
		t.Errorf("%d warnings about the failed ReadMany, want 1", got)
	}
}

// TestReadManyInChunks: a page larger than the store's ReadMany limit is
// read in chunks it accepts.
func TestReadManyInChunks(t *testing.T) {
	e := newEnv(t)
	names, _ := e.dispatchedClusters(t, "c", 3)
	refs := make([]store.DocRef, 0, store.MaxReadMany+3)
	for i := range store.MaxReadMany {
		refs = append(refs, store.DocRef{PartitionKey: testPK, ID: fmt.Sprintf("missing-%d", i)})
	}
	for _, n := range names {
		op := e.op(t, n)
		refs = append(refs, store.DocRef{PartitionKey: testPK, ID: document.CosmosID(op.Properties.ExternalID)})
	}
	manys := e.store.readManys.Load()
	got, err := e.engine.readMany(context.Background(), refs)
	if err != nil || len(got) != 3 {
		t.Fatalf("readMany = %d documents, %v; want the 3 that exist", len(got), err)
	}
	if n := e.store.readManys.Load() - manys; n != 2 {
		t.Errorf("%d ReadMany calls for %d refs, want 2", n, len(refs))
	}
}
