package ocm

import (
	"reflect"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

func intp(v int) *int { return &v }

// TestClusterLifecycle walks create -> ready -> update -> ready -> delete
// -> gone through the client, with the fake clock.
func TestClusterLifecycle(t *testing.T) {
	e := newEnv(t, defaultConfig())
	spec := clusterSpec(1)
	c, err := e.client.PostCluster(e.ctx, spec)
	if err != nil {
		t.Fatalf("PostCluster: %v", err)
	}
	if c.ID != spec.ID || c.Href != cs.ClusterHref(spec.ID) || c.Name != spec.Name || c.Region != spec.Region ||
		c.Azure != spec.Azure || c.Status.State != cs.ClusterStateValidating {
		t.Fatalf("posted cluster = %+v, want the spec back in state validating", c)
	}

	for _, step := range []struct {
		advance time.Duration
		state   string
	}{
		{0, cs.ClusterStateValidating},
		{time.Minute, cs.ClusterStatePending},
		{time.Minute, cs.ClusterStateInstalling},
		{time.Minute, cs.ClusterStateReady},
	} {
		e.clock.Advance(step.advance)
		st, err := e.client.GetClusterStatus(e.ctx, c.Href)
		if err != nil || st.State != step.state {
			t.Fatalf("status = %+v, %v; want %s", st, err, step.state)
		}
	}

	got, err := e.client.GetCluster(e.ctx, c.Href)
	if err != nil || got.Status.State != cs.ClusterStateReady || got.Azure != spec.Azure {
		t.Fatalf("GetCluster = %+v, %v", got, err)
	}

	patched, err := e.client.PatchCluster(e.ctx, c.Href, cs.ClusterPatch{
		NodeDrainGracePeriodMinutes: intp(45),
		AuthorizedCIDRs:             []string{"10.0.0.0/8", "192.168.1.1"},
	})
	if err != nil {
		t.Fatalf("PatchCluster: %v", err)
	}
	if patched.Status.State != cs.ClusterStateUpdating || patched.NodeDrainGracePeriodMinutes != 45 ||
		!reflect.DeepEqual(patched.AuthorizedCIDRs, []string{"10.0.0.0/8", "192.168.1.1"}) {
		t.Fatalf("patched = %+v", patched)
	}
	e.clock.Advance(time.Minute)
	// An empty (non-nil) CIDR list means allow all; the drain period, not in
	// this patch, must survive.
	patched, err = e.client.PatchCluster(e.ctx, c.Href, cs.ClusterPatch{AuthorizedCIDRs: []string{}})
	if err != nil || patched.AuthorizedCIDRs != nil || patched.NodeDrainGracePeriodMinutes != 45 {
		t.Fatalf("second patch = %+v, %v; want allow-all and drain 45 kept", patched, err)
	}
	e.clock.Advance(time.Minute)
	if st, err := e.client.GetClusterStatus(e.ctx, c.Href); err != nil || st.State != cs.ClusterStateReady {
		t.Fatalf("after update: %+v, %v", st, err)
	}

	if err := e.client.DeleteCluster(e.ctx, c.Href); err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	if err := e.client.DeleteCluster(e.ctx, c.Href); err != nil {
		t.Fatalf("repeated DeleteCluster while uninstalling: %v", err)
	}
	if st, err := e.client.GetClusterStatus(e.ctx, c.Href); err != nil || st.State != cs.ClusterStateUninstalling {
		t.Fatalf("after delete: %+v, %v", st, err)
	}
	e.clock.Advance(time.Minute)
	_, err = e.client.GetClusterStatus(e.ctx, c.Href)
	if cs.Classify(err) != cs.Absent {
		t.Fatalf("status after uninstall: err %v, want a 404", err)
	}
	wantCSError(t, err, 404, "not found")
	if _, err := e.client.GetCluster(e.ctx, c.Href); cs.Classify(err) != cs.Absent {
		t.Errorf("GetCluster after uninstall: %v, want 404", err)
	}
	if err := e.client.DeleteCluster(e.ctx, c.Href); cs.Classify(err) != cs.Absent {
		t.Errorf("DeleteCluster after uninstall: %v, want 404", err)
	}
	if l, err := e.client.ListClusters(e.ctx, ""); err != nil || len(l) != 0 {
		t.Errorf("ListClusters after uninstall = %v, %v", l, err)
	}
	if n := e.sim.Ledger().Count("POST", cs.ClustersPath); n != 1 {
		t.Errorf("POST count = %d, want 1", n)
	}
}

func TestClusterRefusals(t *testing.T) {
	e := newEnv(t, defaultConfig())
	c, err := e.client.PostCluster(e.ctx, clusterSpec(1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.client.PostCluster(e.ctx, clusterSpec(1))
	if c := cs.Classify(err); c != cs.Exists {
		t.Errorf("409 classified %s", c)
	}
	wantCSError(t, err, 409, "already exists")
	_, err = e.client.PatchCluster(e.ctx, c.Href, cs.ClusterPatch{NodeDrainGracePeriodMinutes: intp(1)})
	// ARO-HCP retries later on exactly this wording.
	wantCSError(t, err, 400, "Cluster", "is in state 'validating'", "can't update")
	_, err = e.client.PatchCluster(e.ctx, cs.ClusterHref(clusterID(9)), cs.ClusterPatch{})
	wantCSError(t, err, 404)
	_, err = e.client.GetInflightChecks(e.ctx, cs.ClusterHref(clusterID(9)))
	wantCSError(t, err, 404)
	// Legacy clusters_mgmt cluster hrefs are mapped onto aro_hcp.
	if st, err := e.client.GetClusterStatus(e.ctx, cs.ClustersMgmtPrefix+"/clusters/"+clusterID(1)); err != nil ||
		st.State != cs.ClusterStateValidating {
		t.Errorf("status via clusters_mgmt href = %+v, %v", st, err)
	}
}

// TestClusterFailures covers provision errors, including OCM4001 with its
// inflight checks, armed before creation or applied to a live cluster.
func TestClusterFailures(t *testing.T) {
	cases := []struct {
		name      string
		failAfter time.Duration // -1: arm before creation
		failure   simulator.ClusterFailure
		advance   time.Duration
		code, msg string
		failed    []string // inflight check errors expected
	}{
		{"inflight checks, armed by resource name", -1,
			simulator.ClusterFailure{Code: "OCM4001", FailedChecks: 2}, 2 * time.Minute,
			"OCM4001", "Inflight checks failed. Get 'inflight_checks' endpoint for details.",
			[]string{"simulated inflight check failure 1", "simulated inflight check failure 2"}},
		{"inflight checks with texts", -1,
			simulator.ClusterFailure{Code: "OCM4001", CheckErrors: []string{"subnet has no route"}}, 2 * time.Minute,
			"OCM4001", "Inflight checks failed. Get 'inflight_checks' endpoint for details.",
			[]string{"subnet has no route"}},
		{"provision error while installing", 2 * time.Minute,
			simulator.ClusterFailure{Code: "OCM3055", Message: "quota exceeded"}, 0,
			"OCM3055", "quota exceeded", nil},
		{"error on a ready cluster", 3 * time.Minute,
			simulator.ClusterFailure{Message: "control plane lost"}, 0,
			"", "control plane lost", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, defaultConfig())
			spec := clusterSpec(1)
			if tc.failAfter < 0 {
				if applied, err := e.sim.FailCluster(spec.Azure.ResourceName, tc.failure); err != nil || applied {
					t.Fatalf("arming: applied %v, %v", applied, err)
				}
			}
			c, err := e.client.PostCluster(e.ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if tc.failAfter >= 0 {
				e.clock.Advance(tc.failAfter)
				if applied, err := e.sim.FailCluster(spec.ID, tc.failure); err != nil || !applied {
					t.Fatalf("failing: applied %v, %v", applied, err)
				}
			} else {
				// Failure shows where installation would begin, not before.
				e.clock.Advance(time.Minute)
				if st, _ := e.client.GetClusterStatus(e.ctx, c.Href); st.State != cs.ClusterStatePending {
					t.Fatalf("state before failure point = %q, want pending", st.State)
				}
				e.clock.Advance(tc.advance - time.Minute)
			}
			st, err := e.client.GetClusterStatus(e.ctx, c.Href)
			if err != nil || st.State != cs.ClusterStateError || st.ProvisionErrorCode != tc.code ||
				st.ProvisionErrorMessage != tc.msg {
				t.Fatalf("status = %+v, %v; want error %q %q", st, err, tc.code, tc.msg)
			}
			if full, err := e.client.GetCluster(e.ctx, c.Href); err != nil || full.Status != st {
				t.Errorf("embedded status = %+v, %v; want %+v", full.Status, err, st)
			}
			checks, err := e.client.GetInflightChecks(e.ctx, c.Href)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			passed := 0
			for _, ch := range checks {
				switch ch.State {
				case cs.InflightCheckFailed:
					msg, _ := ch.Details["error"].(string)
					failed = append(failed, msg)
				case cs.InflightCheckPassed:
					passed++
				default:
					t.Errorf("check %+v in state %q", ch, ch.State)
				}
				if ch.ID == "" || ch.Name == "" {
					t.Errorf("check without id or name: %+v", ch)
				}
			}
			if !reflect.DeepEqual(sorted(failed), sorted(tc.failed)) {
				t.Errorf("failed checks = %q, want %q", failed, tc.failed)
			}
			if passed != 1 {
				t.Errorf("passed checks = %d, want 1", passed)
			}
		})
	}
}

func TestInflightChecksRunWhileValidating(t *testing.T) {
	e := newEnv(t, defaultConfig())
	c, err := e.client.PostCluster(e.ctx, clusterSpec(1))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := e.client.GetInflightChecks(e.ctx, c.Href)
	if err != nil || len(checks) != 1 || checks[0].State != cs.InflightCheckRunning {
		t.Fatalf("checks while validating = %+v, %v", checks, err)
	}
}

// TestListClustersPaging: the client pages until it has total items, and
// search narrows the result.
func TestListClustersPaging(t *testing.T) {
	e := newEnv(t, defaultConfig(), simulator.WithPageSize(2))
	for n := 1; n <= 5; n++ {
		spec := clusterSpec(n)
		if n > 3 {
			spec.Azure.ResourceGroupName = "rg-other"
		}
		if _, err := e.client.PostCluster(e.ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		search   string
		want     []int
		requests int
	}{
		{"", []int{1, 2, 3, 4, 5}, 3},
		{"azure.resource_group_name = 'rg-dev'", []int{1, 2, 3}, 2},
		{"azure.resource_group_name = 'rg-other' and azure.resource_name = 'cluster-5'", []int{5}, 1},
		{"azure.subscription_id = '11111111-2222-3333-4444-555555555555' and azure.resource_group_name = 'rg-dev' and " +
			"azure.resource_name = 'cluster-2' and azure.tenant_id = '66666666-7777-8888-9999-000000000000' and " +
			"azure.managed_resource_group_name = 'rg-dev-2-managed'", []int{2}, 1},
		{"azure.resource_name = 'none'", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.search, func(t *testing.T) {
			e.sim.ResetLedger()
			got, err := e.client.ListClusters(e.ctx, tc.search)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range got {
				ids = append(ids, c.ID)
			}
			var want []string
			for _, n := range tc.want {
				want = append(want, clusterID(n))
			}
			if !reflect.DeepEqual(ids, want) {
				t.Errorf("ids = %v, want %v", ids, want)
			}
			if n := e.sim.Ledger().Count("GET", cs.ClustersPath); n != tc.requests {
				t.Errorf("list requests = %d, want %d", n, tc.requests)
			}
		})
	}
	_, err := e.client.ListClusters(e.ctx, "name = unquoted")
	wantCSError(t, err, 400, "Search expression")
}
