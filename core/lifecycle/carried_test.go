package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestUpdateSucceedsOnlyWithTheChangeInEffect: an update is Succeeded only
// when CS's live object shows every change it asked for. A version change
// is Succeeded only once CS runs the new version (it was once Succeeded
// on the object's ready state alone, with CS at the old version); one CS
// offers no upgrade to fails at dispatch naming properties.version.id,
// and CS is sent nothing; an update of the other fields still Succeeds
// once CS shows it.
func TestUpdateSucceedsOnlyWithTheChangeInEffect(t *testing.T) {
	np := nodePoolRID("c1", "np1")
	for _, tc := range []struct {
		name   string
		rid    string
		change func(*spec)
		// failed: the update must fail naming the version, CS left alone.
		failed bool
		// version is what CS must run once the update is over.
		version string
		// patches is the CS PATCH the update may send (method pattern).
		patches string
		// live reads what CS shows: its version and whether the other
		// change (drain 45 minutes, 4 replicas) is in effect.
		live func(t *testing.T, e *env, href string) (version string, changed bool)
	}{{
		name: "cluster version only", rid: clusterRID("c1"), version: "4.21.20",
		change:  func(s *spec) { s.cluster.VersionID = "4.21" },
		patches: "/api/aro_hcp/v1alpha1/clusters/{id}",
		live:    liveCluster(func(drain int) bool { return drain == 45 }),
	}, {
		name: "cluster version CS offers no upgrade to, and drain", rid: clusterRID("c1"), failed: true, version: "4.20.25",
		change: func(s *spec) {
			s.cluster.VersionID = "4.22"
			s.cluster.NodeDrainTimeoutMinutes = new(45)
		},
		patches: "/api/aro_hcp/v1alpha1/clusters/{id}",
		live:    liveCluster(func(drain int) bool { return drain == 45 }),
	}, {
		name: "control: cluster drain", rid: clusterRID("c1"), version: "4.20.25",
		change:  func(s *spec) { s.cluster.NodeDrainTimeoutMinutes = new(45) },
		patches: "/api/aro_hcp/v1alpha1/clusters/{id}",
		live:    liveCluster(func(drain int) bool { return drain == 45 }),
	}, {
		name: "control: node pool replicas", rid: np, version: "4.20.3",
		change:  func(s *spec) { s.nodePool.Replicas = 4 },
		patches: "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{np}",
		live:    liveNodePool(func(replicas int) bool { return replicas == 4 }),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindNodePool, np, request{}))
			href := e.resource(t, tc.rid).ClusterServiceID()
			before := e.sim.Ledger().Count("PATCH", tc.patches)

			op := e.update(t, tc.rid, request{notify: true}, tc.change)
			e.drive(t, op)

			version, changed := tc.live(t, e, href)
			patched := e.sim.Ledger().Count("PATCH", tc.patches) - before
			if version != tc.version {
				t.Errorf("CS runs %q once the update is over, want %q", version, tc.version)
			}
			if !tc.failed {
				e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
				if (tc.name != "cluster version only") != changed || patched != 1 {
					t.Errorf("CS shows the other change: %v, PATCHes sent: %d; want the update in effect through one PATCH", changed, patched)
				}
				return
			}
			got := e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInvalidRequestContent)
			if got.Properties.Error.Target != versionField || !strings.Contains(got.Properties.Error.Message, versionField) ||
				!strings.Contains(got.Properties.Error.Message, "versions possible") {
				t.Errorf("error = %+v; want it to name %s and the versions possible", got.Properties.Error, versionField)
			}
			if changed || patched != 0 {
				t.Errorf("other change applied: %v, PATCHes: %d; want CS left alone", changed, patched)
			}
			if calls := e.sink.calls(op); len(calls) != 1 || calls[0].Body.Status != arm.ProvisioningStateFailed {
				t.Errorf("notifications = %+v, want one Failed", calls)
			}
		})
	}
}

// TestUpdateSentByAnEarlierBackendFailsOnItsVersion: an update already
// sent to CS (Updating) whose resource asks for a version CS does not run
// and was never asked to upgrade to fails on its poll instead of
// Succeeding on the other fields.
func TestUpdateSentByAnEarlierBackendFailsOnItsVersion(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.UpgradeDeadline = 20 * time.Minute })
	e.readyCluster(t, "c1")
	op := e.update(t, clusterRID("c1"), request{}, func(s *spec) { s.cluster.NodeDrainTimeoutMinutes = new(45) })
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	if got := e.op(t, op).Properties.Status; got != arm.ProvisioningStateUpdating {
		t.Fatalf("update is %s after dispatch, want Updating", got)
	}
	e.editDoc(t, clusterRID("c1"), func(doc obj) {
		props(doc)["customerProperties"].(obj)["version"].(obj)["id"] = "4.21"
	})
	// CS listing no policy for the version is no word that it failed:
	// the update waits, and only its deadline ends it.
	for range 3 {
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	if got := e.op(t, op).Properties.Status; got.IsTerminal() {
		t.Fatalf("update is %s before its deadline on a policy list that only omits the version", got)
	}
	e.drive(t, op)
	got := e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
	if !strings.Contains(got.Properties.Error.Message, "cluster update did not complete before the deadline") {
		t.Errorf("error %q is not the update's deadline", got.Properties.Error.Message)
	}
}

func liveCluster(changed func(drain int) bool) func(*testing.T, *env, string) (string, bool) {
	return func(t *testing.T, e *env, href string) (string, bool) {
		t.Helper()
		c, err := e.cs.GetCluster(context.Background(), href)
		if err != nil {
			t.Fatalf("GetCluster: %v", err)
		}
		return c.Version, changed(c.NodeDrainGracePeriodMinutes)
	}
}

func liveNodePool(changed func(replicas int) bool) func(*testing.T, *env, string) (string, bool) {
	return func(t *testing.T, e *env, href string) (string, bool) {
		t.Helper()
		np, err := e.cs.GetNodePool(context.Background(), href)
		if err != nil {
			t.Fatalf("GetNodePool: %v", err)
		}
		return np.Version, changed(np.Replicas)
	}
}

func TestVersionRuns(t *testing.T) {
	for _, tc := range []struct {
		want, live string
		runs       bool
	}{
		{"", "4.20.3", true},
		{"4.20", "4.20", true},
		{"4.20", "4.20.25", true},
		{"4.2", "4.20.25", false},
		{"4.21", "4.20.25", false},
		{"4.20.10", "4.20.10", true},
		{"4.20.1", "4.20.10", false},
		{"4.20.10", "4.20.8", false},
		{"4.20", "", false},
	} {
		if got := versionRuns(tc.want, tc.live); got != tc.runs {
			t.Errorf("versionRuns(%q, %q) = %v, want %v", tc.want, tc.live, got, tc.runs)
		}
	}
}

// TestUpgradeFromAVersionCSDoesNotListIsHeld: the node pool runs 4.20.3,
// which CS's version list does not name, so the list says nothing of the
// upgrades CS offers from it (an empty list from a misrouted replica reads
// the same): the update is neither refused nor sent, and only its
// deadline ends it, CS not working on it.
func TestUpgradeFromAVersionCSDoesNotListIsHeld(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.UpgradeDeadline = 20 * time.Minute })
	e.readyCluster(t, "c1")
	np := nodePoolRID("c1", "np1")
	e.drive(t, e.create(t, document.KindNodePool, np, request{}))
	before := e.sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{np}/upgrade_policies")
	op := e.update(t, np, request{}, func(s *spec) { s.nodePool.VersionID = "4.20.10" })
	for range 5 {
		if _, err := e.deliver(t); err != nil {
			t.Logf("dispatch: %v", err)
		}
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	if got := e.op(t, op).Properties.Status; got.IsTerminal() {
		t.Fatalf("update is %s on a version list that does not name the version CS runs", got)
	}
	if n := e.sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{np}/upgrade_policies") - before; n != 0 {
		t.Fatalf("%d upgrade policies posted; want none", n)
	}
	e.drive(t, op)
	got := e.wantOp(t, op, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
	if !strings.Contains(got.Properties.Error.Message, "did not complete before the deadline") {
		t.Errorf("error %q is not the update's deadline", got.Properties.Error.Message)
	}
}
