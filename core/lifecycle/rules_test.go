package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// The decision rules, one table per rule, in the shape of upstream's
// operation controller tests: the documents and CS objects before, what
// CS answers, and the operation and its resource after one tick.

// rule is one case.
type rule struct {
	name string
	// before writes the documents and makes the CS objects; it returns
	// the operation under test.
	before func(t *testing.T, e *env) string
	// cs sets what CS answers during the tick (nil: the simulator as it is).
	cs func(t *testing.T, e *env)
	// want is the state after one tick.
	want after
}

// after is what one tick leaves.
type after struct {
	status  arm.ProvisioningState
	code    string // the operation's error code; "" means no error
	message string // its exact error message, when set
	target  string // its error target, when set
	// resource is the resource's provisioningState, or "gone"; "" leaves
	// it unchecked.
	resource arm.ProvisioningState
	skipped  string // the skip reason the tick counted, "" for none
	noCS     bool   // the tick made no CS call
	// calls are CS requests the tick made, by "METHOD pattern" (the
	// simulator's route patterns), each the exact count.
	calls map[string]int
	// then checks anything else of the operation after the tick.
	then func(t *testing.T, e *env, op *document.OperationDocument)
}

const gone arm.ProvisioningState = "gone"

func runRules(t *testing.T, rules []rule) {
	t.Helper()
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			e := newEnv(t)
			name := r.before(t, e)
			if r.cs != nil {
				r.cs(t, e)
			}
			ledger := e.sim.Ledger()
			calls := ledger.Total()
			res := e.tick(t)
			w := r.want
			op := e.wantOp(t, name, w.status, w.code)
			if w.message != "" && op.Properties.Error.Message != w.message {
				t.Errorf("error message = %q, want %q", op.Properties.Error.Message, w.message)
			}
			if w.target != "" && op.Properties.Error.Target != w.target {
				t.Errorf("error target = %q, want %q", op.Properties.Error.Target, w.target)
			}
			switch res := e.resource(t, op.Properties.ExternalID); {
			case w.resource == "":
			case res == nil && w.resource != gone:
				t.Errorf("resource is gone, want %s", w.resource)
			case res != nil && w.resource == gone:
				t.Errorf("resource is %s, want it gone", res.ProvisioningState())
			case res != nil && res.ProvisioningState() != w.resource:
				t.Errorf("resource is %s, want %s", res.ProvisioningState(), w.resource)
			}
			if w.skipped == "" && res.Skipped != 0 || w.skipped != "" && (res.Skipped != 1 || res.SkippedReasons[w.skipped] != 1) {
				t.Errorf("tick = %+v, want skipped %q", res, w.skipped)
			}
			if n := e.sim.Ledger().Total() - calls; w.noCS && n != 0 {
				t.Errorf("the tick made %d CS calls, want none", n)
			}
			for call, want := range w.calls {
				if got := e.sim.Ledger().ByPattern[call] - ledger.ByPattern[call]; got != want {
					t.Errorf("the tick made %d CS calls %s, want %d", got, call, want)
				}
			}
			if w.then != nil {
				w.then(t, e, op)
			}
		})
	}
}

// Before-documents.

func np1() string { return nodePoolRID("c1", "np1") }
func ea1() string { return externalAuthRID("c1", "ea1") }

// readyChild makes cluster c1 and its child rid, both Succeeded.
func readyChild(t *testing.T, e *env, kind document.Kind, rid string) {
	t.Helper()
	e.readyCluster(t, "c1")
	e.drive(t, e.create(t, kind, rid, request{}))
}

// dispatched makes op's CS call through the change feed.
func dispatched(t *testing.T, e *env, op string) string {
	t.Helper()
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	return op
}

// edit rewrites the service-provider properties of a resource.
func edit(t *testing.T, e *env, rid string, f func(spp obj)) {
	t.Helper()
	e.editDoc(t, rid, func(doc obj) { f(spp(doc)) })
}

// removeDoc soft-deletes a resource document behind the engine's back.
func removeDoc(t *testing.T, e *env, rid string) {
	t.Helper()
	if err := e.store.Store.SoftDelete(context.Background(), testPK, document.CosmosID(rid)); err != nil {
		t.Fatal(err)
	}
}

// stampedDelete is a Delete whose dispatch marker is on the resource but
// whose CS DELETE never went out: CS still has the object as it was.
func stampedDelete(t *testing.T, e *env, rid string) string {
	t.Helper()
	op := e.remove(t, rid, request{})[0]
	edit(t, e, rid, func(s obj) { s["clusterServiceDeletionTimestamp"] = e.clk.Now().UTC().Format(time.RFC3339) })
	return op
}

// legacyDocGone is a legacy Delete of a ready child whose document is
// gone; csDelete as legacyDeleteOp's, and wait is how much time passes.
func legacyDocGone(kind document.Kind, rid string, csDelete bool, wait time.Duration) func(*testing.T, *env) string {
	return func(t *testing.T, e *env) string {
		readyChild(t, e, kind, rid)
		op := e.legacyDeleteOp(t, rid, csDelete)
		removeDoc(t, e, rid)
		e.clk.Advance(wait)
		return op
	}
}

// TestRuleEvidence: a delete is Succeeded only when CS says the object is
// gone (404), or, on the new deletion approach, when the document is.
func TestRuleEvidence(t *testing.T) {
	runRules(t, []rule{{
		name: "node pool delete, CS uninstalling",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			return dispatched(t, e, e.remove(t, np1(), request{})[0])
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting},
	}, {
		name: "node pool delete, CS answers 404",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := dispatched(t, e, e.remove(t, np1(), request{})[0])
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: heldForWindow(nil),
	}, {
		name: "node pool delete, CS still ready",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			return stampedDelete(t, e, np1())
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting},
	}, {
		name: "node pool delete, document gone",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := e.remove(t, np1(), request{})[0]
			removeDoc(t, e, np1())
			return op
		},
		want: after{status: arm.ProvisioningStateSucceeded, resource: gone, noCS: true},
	}, {
		name: "node pool delete, its create reached CS unrecorded",
		before: func(t *testing.T, e *env) string {
			clusterHref := e.readyCluster(t, "c1")
			e.create(t, document.KindNodePool, np1(), request{})
			// The create's POST landed; the delete came before it was recorded.
			if _, err := e.cs.PostNodePool(context.Background(), clusterHref, cs.NodePoolSpec{ID: "np1", Replicas: 1}); err != nil {
				t.Fatal(err)
			}
			return dispatched(t, e, e.remove(t, np1(), request{})[0])
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: arm.ProvisioningStateDeleting},
	}, {
		name: "node pool delete, CS never had it",
		before: func(t *testing.T, e *env) string {
			e.readyCluster(t, "c1")
			e.create(t, document.KindNodePool, np1(), request{})
			return dispatched(t, e, e.remove(t, np1(), request{})[0])
		},
		want: heldForWindow(nil),
	}, {
		name:   "legacy node pool delete, document gone, CS still ready",
		before: legacyDocGone(document.KindNodePool, np1(), false, 0),
		want:   after{status: arm.ProvisioningStateDeleting, resource: gone},
	}, {
		name:   "legacy node pool delete, document gone, CS answers 404",
		before: legacyDocGone(document.KindNodePool, np1(), true, 2*time.Minute),
		want:   heldForWindow(nil),
	}, {
		name:   "legacy external auth delete, document gone, CS uninstalling",
		before: legacyDocGone(document.KindExternalAuth, ea1(), true, 0),
		want:   after{status: arm.ProvisioningStateDeleting, resource: gone},
	}, {
		name: "legacy external auth delete, no internalId, document gone",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindExternalAuth, ea1())
			op, _ := e.newOp(t, document.RequestDelete, ea1(), "", request{})
			op.Properties.UsesNewExternalAuthDeletionApproach = false
			body, err := op.MarshalCreate()
			if err != nil {
				t.Fatal(err)
			}
			e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}})
			removeDoc(t, e, ea1())
			return op.Name()
		},
		want: after{status: arm.ProvisioningStateDeleting, resource: gone, skipped: SkipLegacyDeleteUnknownTarget, noCS: true},
	}})
}

// TestRuleSkip: upstream's early returns. A resource being deleted skips
// its create and update; an empty or unreadable activeOperationId decides
// nothing; a resource another operation positively owns cancels the
// operation (hcpops's addition: upstream leaves it to wait forever).
func TestRuleSkip(t *testing.T) {
	createdNodePool := func(t *testing.T, e *env) string {
		e.readyCluster(t, "c1")
		return dispatched(t, e, e.create(t, document.KindNodePool, np1(), request{}))
	}
	runRules(t, []rule{{
		name: "cluster create, resource deleting",
		before: func(t *testing.T, e *env) string {
			op := dispatched(t, e, e.create(t, document.KindCluster, clusterRID("c1"), request{}))
			edit(t, e, clusterRID("c1"), func(s obj) { s["deletionTimestamp"] = e.clk.Now().UTC().Format(time.RFC3339) })
			e.clk.Advance(10 * time.Minute) // CS has long finished
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted, skipped: SkipResourceDeleting, noCS: true},
	}, {
		name: "node pool update, resource deleting",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := e.update(t, np1(), request{}, func(s *spec) { s.nodePool.Replicas = 5 })
			edit(t, e, np1(), func(s obj) { s["deletionTimestamp"] = e.clk.Now().UTC().Format(time.RFC3339) })
			e.clk.Advance(2 * time.Minute) // past the dispatch grace
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted, skipped: SkipResourceDeleting, noCS: true},
	}, {
		name: "node pool create, no activeOperationId",
		before: func(t *testing.T, e *env) string {
			op := createdNodePool(t, e)
			edit(t, e, np1(), func(s obj) { delete(s, "activeOperationId") })
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted, skipped: SkipNoActiveOperation, noCS: true},
	}, {
		name: "node pool create, unreadable activeOperationId",
		before: func(t *testing.T, e *env) string {
			op := createdNodePool(t, e)
			edit(t, e, np1(), func(s obj) { s["activeOperationId"] = "not-an-operation" })
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: arm.ProvisioningStateAccepted, skipped: SkipActiveOperationUnreadable, noCS: true},
	}, {
		name: "node pool create, another operation owns the resource",
		before: func(t *testing.T, e *env) string {
			op := createdNodePool(t, e)
			edit(t, e, np1(), func(s obj) { s["activeOperationId"] = uuid.NewString() })
			return op
		},
		want: after{status: arm.ProvisioningStateCanceled, code: arm.CodeCanceled, message: "This operation was superseded by another",
			resource: arm.ProvisioningStateAccepted, noCS: true},
	}, {
		name: "node pool create, resource document gone",
		before: func(t *testing.T, e *env) string {
			op := createdNodePool(t, e)
			removeDoc(t, e, np1())
			return op
		},
		want: after{status: arm.ProvisioningStateAccepted, resource: gone, skipped: SkipResourceNotFound, noCS: true},
	}, {
		name: "node pool delete, no activeOperationId",
		before: func(t *testing.T, e *env) string {
			readyChild(t, e, document.KindNodePool, np1())
			op := dispatched(t, e, e.remove(t, np1(), request{})[0])
			edit(t, e, np1(), func(s obj) { delete(s, "activeOperationId") })
			e.clk.Advance(2 * time.Minute)
			return op
		},
		want: heldForWindow(nil),
	}})
}

// CS routes as the simulator's ledger counts them, for after.calls.
const (
	csClusters      = cs.ClustersPath
	csCluster       = csClusters + "/{id}"
	csNodePools     = csCluster + "/node_pools"
	csNodePool      = csNodePools + "/{np}"
	csExternalAuths = csCluster + "/external_auth_config/external_auths"
	csExternalAuth  = csExternalAuths + "/{ea}"
	csCredentials   = cs.ClustersMgmtPrefix + "/clusters/{id}/break_glass_credentials"
)

// pastDeadline sets the resource's create or delete completion deadline
// (key) a second before now.
func pastDeadline(t *testing.T, e *env, rid, key string) {
	t.Helper()
	edit(t, e, rid, func(s obj) { s[key] = e.clk.Now().Add(-time.Second).UTC().Format(time.RFC3339) })
}

// expiredAs checks the deadline's error names the work that ran late.
func expiredAs(work string) func(*testing.T, *env, *document.OperationDocument) {
	return func(t *testing.T, _ *env, op *document.OperationDocument) {
		t.Helper()
		if want := work + " did not complete before the deadline"; !strings.HasPrefix(op.Properties.Error.Message, want) {
			t.Errorf("error message = %q, want it to begin %q", op.Properties.Error.Message, want)
		}
	}
}

// recorded checks the resource's clusterServiceID ends with suffix.
func recorded(suffix string) func(*testing.T, *env, *document.OperationDocument) {
	return func(t *testing.T, e *env, op *document.OperationDocument) {
		t.Helper()
		if id := e.resource(t, op.Properties.ExternalID).ClusterServiceID(); !strings.HasSuffix(id, suffix) {
			t.Errorf("clusterServiceID = %q, want one ending %q", id, suffix)
		}
	}
}

// stamped checks the resource carries clusterServiceDeletionTimestamp.
func stamped(t *testing.T, e *env, op *document.OperationDocument) {
	t.Helper()
	if _, ok := e.resource(t, op.Properties.ExternalID).ClusterServiceDeletionTimestamp(); !ok {
		t.Errorf("resource has no clusterServiceDeletionTimestamp")
	}
}

// notInCS makes the ready cluster c1 look as if CS never had it: its
// clusterServiceID is dropped, so its children and credential requests
// wait for it.
func notInCS(t *testing.T, e *env) {
	t.Helper()
	edit(t, e, clusterRID("c1"), func(s obj) { delete(s, "clusterServiceID") })
}
