package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// The tests below follow the cases of upstream's version controller tests
// (backend/pkg/controllers/{cluster,nodepool}/version/): target
// resolution, idempotent policy creation, Succeeded only at CS's reported
// version, a failed upgrade and a deadline.

func TestResolveTarget(t *testing.T) {
	v := func(raw, group string, enabled bool, upgrades ...string) cs.Version {
		return cs.Version{ID: "openshift-v" + raw, RawID: raw, ChannelGroup: group, Enabled: enabled, AvailableUpgrades: upgrades}
	}
	versions := []cs.Version{
		v("4.20.8", "stable", true, "4.20.10", "4.20.12", "4.20.25"),
		v("4.20.10", "stable", true, "4.20.25", "4.21.20"),
		v("4.20.12", "stable", false),
		v("4.20.25", "stable", true, "4.21.3", "4.21.20", "4.21.21"),
		v("4.21.3", "stable", true),
		v("4.21.20", "stable", true),
		v("4.21.21", "stable", false),
		v("4.20.25", "candidate", true, "4.21.30"),
		v("4.21.30", "candidate", true),
		v("4.21.31", "candidate", true),
	}
	for _, tc := range []struct {
		name  string
		asked versionAsked
		want  string // the target's raw id; "" when refused
		// refusal holds the words the refusal must carry.
		refusal []string
	}{
		{"minor to its newest enabled z-stream", versionAsked{want: "4.21", group: "stable", running: "4.20.25"}, "4.21.20", nil},
		{"z-stream exactly", versionAsked{want: "4.21.3", group: "stable", running: "4.20.25"}, "4.21.3", nil},
		{"candidate group", versionAsked{want: "4.21", group: "candidate", running: "4.20.25"}, "4.21.30", nil},
		{"within a minor", versionAsked{want: "4.20.10", group: "stable", running: "4.20.8"}, "4.20.10", nil},
		{"disabled version", versionAsked{want: "4.20.12", group: "stable", running: "4.20.8"}, "",
			[]string{`"4.20.12"`, "4.20.10, 4.20.25"}},
		{"disabled newest z-stream skipped", versionAsked{want: "4.21.21", group: "stable", running: "4.20.25"}, "",
			[]string{"4.21.3, 4.21.20"}},
		{"no upgrade path", versionAsked{want: "4.22", group: "stable", running: "4.20.25"}, "",
			[]string{"no upgrade", "4.21.3, 4.21.20"}},
		{"not above the control plane", versionAsked{want: "4.21.20", group: "stable", running: "4.20.10", ceiling: "4.20.25"}, "",
			[]string{"control plane's 4.20.25", "are 4.20.25"}},
		{"ceiling allows the same", versionAsked{want: "4.20.25", group: "stable", running: "4.20.10", ceiling: "4.20.25"}, "4.20.25", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveTarget("cluster", tc.asked, versions)
			if tc.want != "" {
				if err != nil || got.RawID != tc.want {
					t.Fatalf("target = %q, %v; want %s", got.RawID, err, tc.want)
				}
				return
			}
			var r *refusal
			if !errors.As(err, &r) || r.body.Target != versionField || r.body.Code != arm.CodeInvalidRequestContent {
				t.Fatalf("err = %v; want a refusal of %s", err, versionField)
			}
			for _, w := range tc.refusal {
				if !strings.Contains(r.body.Message, w) {
					t.Errorf("refusal %q does not say %q", r.body.Message, w)
				}
			}
		})
	}
}

// upgradeEnv has a ready cluster c1 at 4.20 (CS runs 4.20.25) and a ready
// node pool np1 at 4.20.8; CS's upgrades take a minute scheduled and
// upgrading minutes.
func upgradeEnv(t *testing.T, upgrading time.Duration, tweak ...func(*Config)) (*env, string, string) {
	t.Helper()
	e := newEnv(t, tweak...)
	d := e.sim.Durations()
	d.ControlPlaneUpgrading, d.NodePoolUpgrading = upgrading, upgrading
	e.sim.SetDurations(d)
	clusterHref := e.readyCluster(t, "c1")
	s := defaultSpec(nodePoolRID("c1", "np1"))
	s.nodePool.VersionID = "4.20.8"
	e.drive(t, e.put(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}, s))
	return e, clusterHref, e.resource(t, nodePoolRID("c1", "np1")).ClusterServiceID()
}

// upgradeCase is one upgrade through the engine: the cluster to 4.21 or
// the node pool to 4.20.10.
type upgradeCase struct {
	name, rid, target string
	posts             string // the ledger pattern of its policy POST
	change            func(*spec)
	running           func(t *testing.T, e *env, href string) string
}

func upgradeCases() []upgradeCase {
	return []upgradeCase{{
		name: "control plane", rid: clusterRID("c1"), target: "4.21.20",
		posts:  "/api/aro_hcp/v1alpha1/clusters/{id}/control_plane_upgrade_policies",
		change: func(s *spec) { s.cluster.VersionID = "4.21" },
		running: func(t *testing.T, e *env, href string) string {
			v, _ := liveCluster(func(int) bool { return false })(t, e, href)
			return v
		},
	}, {
		name: "node pool", rid: nodePoolRID("c1", "np1"), target: "4.20.10",
		posts:  "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{np}/upgrade_policies",
		change: func(s *spec) { s.nodePool.VersionID = "4.20.10" },
		running: func(t *testing.T, e *env, href string) string {
			v, _ := liveNodePool(func(int) bool { return false })(t, e, href)
			return v
		},
	}}
}

// TestUpgradeSucceedsOnlyAtTheReportedVersion: the update stays Updating,
// tick after tick, while CS's upgrade is scheduled and started and CS
// reports the old version; it is Succeeded on the first tick CS reports
// the target, and CS got exactly one policy.
func TestUpgradeSucceedsOnlyAtTheReportedVersion(t *testing.T) {
	for _, tc := range upgradeCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := upgradeEnv(t, 5*time.Minute)
			href := e.resource(t, tc.rid).ClusterServiceID()
			op := e.update(t, tc.rid, request{notify: true}, tc.change)
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			for round := 0; round < 12; round++ {
				e.tick(t)
				running, status := tc.running(t, e, href), e.op(t, op).Properties.Status
				if (running == tc.target) != (status == arm.ProvisioningStateSucceeded) {
					t.Fatalf("round %d: CS runs %s and the update is %s; want Succeeded exactly when CS runs %s", round, running, status, tc.target)
				}
				if status == arm.ProvisioningStateSucceeded {
					if n := e.sim.Ledger().Count("POST", tc.posts); n != 1 {
						t.Errorf("%d upgrade policies posted, want 1", n)
					}
					if round < 5 {
						t.Errorf("Succeeded after %d rounds, before CS's upgrade could end", round)
					}
					return
				}
				e.clk.Advance(time.Minute)
			}
			t.Fatalf("the update never Succeeded")
		})
	}
}

// TestUpgradeDispatchIsIdempotent: a dispatch that posted the policy and
// died before it marked the operation (a restart mid-upgrade) is run
// again: it reads the newest policy, posts no second one, and the upgrade
// completes.
func TestUpgradeDispatchIsIdempotent(t *testing.T) {
	for _, tc := range upgradeCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, _, npHref := upgradeEnv(t, 3*time.Minute)
			href := e.resource(t, tc.rid).ClusterServiceID()
			op := e.update(t, tc.rid, request{}, tc.change)
			// What the dead dispatch did: the policy, and nothing else.
			var err error
			if tc.name == "node pool" {
				_, err = e.cs.PostNodePoolUpgradePolicy(context.Background(), npHref, tc.target)
			} else {
				_, err = e.cs.PostControlPlaneUpgradePolicy(context.Background(), href, tc.target)
			}
			if err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(90 * time.Second) // the policy has started
			e.engine = e.newEngine(t)       // the restart
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
			if n := e.sim.Ledger().Count("POST", tc.posts); n != 1 {
				t.Errorf("%d upgrade policies posted, want the one from before the restart", n)
			}
			if got := tc.running(t, e, href); got != tc.target {
				t.Errorf("CS runs %s, want %s", got, tc.target)
			}
		})
	}
}

// TestUpgradeFailsOnCSWord: CS failing or cancelling the upgrade fails
// the update with CS's description; an upgrade past the deadline that CS
// lists no policy for (no word that it is under way) fails as every
// deadline. One CS says is under way is held instead
// (TestUpgradeOutlastingItsDeadline).
func TestUpgradeFailsOnCSWord(t *testing.T) {
	for _, tc := range upgradeCases() {
		for _, failure := range []struct {
			name  string
			tweak func(*Config)
			arm   bool
			code  string
			words []string
		}{
			{"failed by CS", nil, true, arm.CodeInternalServerError, []string{"is failed: nodes did not drain"}},
			{"cancelled by CS", nil, true, arm.CodeInternalServerError, []string{"is cancelled: nodes did not drain"}},
			// The deadline is the update's, written as every deadline is
			// (expireIfLate): handler.deadline decides it.
			{"deadline, no policy listed", func(c *Config) { c.UpgradeDeadline = 10 * time.Minute }, false, arm.CodeInternalServerError,
				[]string{"update did not complete before the deadline"}},
		} {
			t.Run(tc.name+" "+failure.name, func(t *testing.T) {
				var tweak []func(*Config)
				if failure.tweak != nil {
					tweak = append(tweak, failure.tweak)
				}
				e, _, _ := upgradeEnv(t, time.Hour, tweak...)
				href := e.resource(t, tc.rid).ClusterServiceID()
				if failure.arm {
					id := ""
					if tc.name == "node pool" {
						id = "np1"
					}
					f := simulator.UpgradeFailure{Message: "nodes did not drain", Cancel: strings.HasPrefix(failure.name, "cancelled")}
					if _, err := e.sim.FailUpgrade("c1", id, f); err != nil {
						t.Fatal(err)
					}
					d := e.sim.Durations()
					d.ControlPlaneUpgrading, d.NodePoolUpgrading = 3*time.Minute, 3*time.Minute
					e.sim.SetDurations(d)
				}
				if failure.tweak != nil { // CS lists no policy: no word that the upgrade is under way
					e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
						if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "upgrade_policies") {
							return false
						}
						w.Header().Set("Content-Type", "application/json")
						_, _ = w.Write([]byte(`{"kind":"UpgradePolicyList","page":1,"size":0,"total":0,"items":[]}`))
						return true
					})
				}
				op := e.update(t, tc.rid, request{notify: true}, tc.change)
				e.drive(t, op)
				got := e.wantOp(t, op, arm.ProvisioningStateFailed, failure.code)
				// CS's failure, not the caller's: the results route answers 5xx.
				if st := arm.FailureStatus(got.Properties.Status, got.Properties.Error.Code); st < 500 {
					t.Errorf("results route status %d for CS's failure %s", st, got.Properties.Error.Code)
				}
				for _, w := range failure.words {
					if !strings.Contains(got.Properties.Error.Message, w) {
						t.Errorf("error %q does not say %q", got.Properties.Error.Message, w)
					}
				}
				if running := tc.running(t, e, href); running == tc.target {
					t.Errorf("CS runs the target %s after a failed upgrade", running)
				}
			})
		}
	}
}

// TestAnotherVersionsPolicyIsNotTheUpgrades: CS has an upgrade policy
// for another version (4.20.25) under way when the node pool's update to
// 4.20.10 is dispatched. It is not taken as the update's: the dispatch
// waits it out (no second policy while it runs), its failure does not
// fail the update, and then the update's own policy runs to Succeeded.
func TestAnotherVersionsPolicyIsNotTheUpgrades(t *testing.T) {
	e, _, npHref := upgradeEnv(t, 3*time.Minute)
	if _, err := e.sim.FailUpgrade("c1", "np1", simulator.UpgradeFailure{Message: "another upgrade's failure"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cs.PostNodePoolUpgradePolicy(context.Background(), npHref, "4.20.25"); err != nil {
		t.Fatal(err)
	}
	const posts = "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{np}/upgrade_policies"
	op := e.update(t, nodePoolRID("c1", "np1"), request{}, func(s *spec) { s.nodePool.VersionID = "4.20.10" })
	for range 3 {
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		e.tick(t)
		if got := e.op(t, op); got.Properties.Status.IsTerminal() || got.Properties.Status == arm.ProvisioningStateUpdating {
			t.Fatalf("while another version's policy runs the update is %s; want it waiting to dispatch", got.Properties.Status)
		}
		e.clk.Advance(time.Minute)
	}
	if n := e.sim.Ledger().Count("POST", posts); n != 1 {
		t.Fatalf("%d policies posted while another ran, want only that one", n)
	}
	e.drive(t, op) // the other fails; the update's own policy runs
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	if n := e.sim.Ledger().Count("POST", posts); n != 2 {
		t.Errorf("%d policies posted, want the other and the update's own", n)
	}
	v, _ := liveNodePool(func(int) bool { return false })(t, e, npHref)
	if v != "4.20.10" {
		t.Errorf("CS runs the node pool at %s, want 4.20.10", v)
	}
}

// TestResolveTargetNeedsTheRunningVersion: a version list that does not
// name the version CS runs the object at (an empty list from a misrouted
// replica, another channel's catalog) is no word on the upgrades CS
// offers: the dispatch is retried, never refused. The simulation found
// it: an upgrade to 4.21 from 4.20.25 written Failed, "the versions
// possible are none", while CS offered 4.21.20 (dst seeds 44 and 207).
func TestResolveTargetNeedsTheRunningVersion(t *testing.T) {
	for _, versions := range [][]cs.Version{
		nil,
		{{ID: "openshift-v4.22.1", RawID: "4.22.1", ChannelGroup: "stable", Enabled: true}},
	} {
		_, err := resolveTarget("cluster", versionAsked{want: "4.21", group: "stable", running: "4.20.25"}, versions)
		var r *refusal
		if errors.As(err, &r) || !errors.Is(err, errRetryLater) {
			t.Errorf("versions %v: err = %v; want it retried, not refused", versions, err)
		}
	}
}
