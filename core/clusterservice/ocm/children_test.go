package ocm

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

func nodePoolSpec() cs.NodePoolSpec {
	return cs.NodePoolSpec{
		ID: "np1", VersionID: "openshift-v4.19.0", ChannelGroup: "stable", VMSize: "Standard_D8s_v3",
		Replicas: 3, AutoRepair: true, Labels: map[string]string{"team": "a"},
	}
}

func TestNodePoolLifecycle(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	np, err := e.client.PostNodePool(e.ctx, ch, nodePoolSpec())
	if err != nil {
		t.Fatalf("PostNodePool: %v", err)
	}
	href := cs.NodePoolHref(ch, "np1")
	if np.ID != "np1" || np.Href != href || np.Replicas != 3 || !reflect.DeepEqual(np.Labels, map[string]string{"team": "a"}) ||
		np.Status.State != cs.NodePoolStateValidating {
		t.Fatalf("posted node pool = %+v", np)
	}
	_, err = e.client.PostNodePool(e.ctx, ch, nodePoolSpec())
	wantCSError(t, err, 409, "already exists")

	for _, step := range []struct {
		advance time.Duration
		state   string
		current int
	}{
		{0, cs.NodePoolStateValidating, 0},
		{time.Minute, cs.NodePoolStatePending, 0},
		{time.Minute, cs.NodePoolStateInstalling, 0},
		{time.Minute, cs.NodePoolStateReady, 3},
	} {
		e.clock.Advance(step.advance)
		st, err := e.client.GetNodePoolStatus(e.ctx, href)
		if err != nil || st.State != step.state || st.CurrentReplicas != step.current {
			t.Fatalf("node pool status = %+v, %v; want %s with %d replicas", st, err, step.state, step.current)
		}
	}

	got, err := e.client.PatchNodePool(e.ctx, href, cs.NodePoolPatch{Replicas: intp(5)})
	if err != nil || got.Replicas != 5 || got.Status.State != cs.NodePoolStateUpdating ||
		!reflect.DeepEqual(got.Labels, map[string]string{"team": "a"}) {
		t.Fatalf("patch replicas = %+v, %v; want 5 replicas, labels kept, updating", got, err)
	}
	e.clock.Advance(time.Minute)
	got, err = e.client.PatchNodePool(e.ctx, href, cs.NodePoolPatch{Labels: map[string]string{}})
	if err != nil || got.Replicas != 5 || len(got.Labels) != 0 {
		t.Fatalf("patch labels = %+v, %v; want labels cleared, replicas kept", got, err)
	}
	e.clock.Advance(time.Minute)
	got, err = e.client.GetNodePool(e.ctx, href)
	if err != nil || got.Status.State != cs.NodePoolStateReady || got.Status.CurrentReplicas != 5 {
		t.Fatalf("GetNodePool after update = %+v, %v", got, err)
	}

	if err := e.client.DeleteNodePool(e.ctx, href); err != nil {
		t.Fatalf("DeleteNodePool: %v", err)
	}
	if st, err := e.client.GetNodePoolStatus(e.ctx, href); err != nil || st.State != cs.NodePoolStateUninstalling {
		t.Fatalf("after delete: %+v, %v", st, err)
	}
	e.clock.Advance(time.Minute)
	if _, err := e.client.GetNodePoolStatus(e.ctx, href); cs.Classify(err) != cs.Absent {
		t.Fatalf("status after uninstall: %v, want 404", err)
	}
	if _, err := e.client.GetNodePool(e.ctx, href); cs.Classify(err) != cs.Absent {
		t.Fatalf("GetNodePool after uninstall: %v, want 404", err)
	}
	// The ID is free again.
	if _, err := e.client.PostNodePool(e.ctx, ch, nodePoolSpec()); err != nil {
		t.Fatalf("re-create after delete: %v", err)
	}
}

func TestNodePoolFailures(t *testing.T) {
	cases := []struct {
		name    string
		armed   bool
		failure simulator.NodePoolFailure
		advance time.Duration // after creation, before failing
		settle  time.Duration // after failing, before reading
	}{
		{"armed recoverable error", true,
			simulator.NodePoolFailure{State: "recoverable_error", Message: "WaitingForAvailableMachines: 1 of 3 machines available"},
			2 * time.Minute, 0},
		{"error on a ready pool", false, simulator.NodePoolFailure{State: "error", Message: "machines lost"}, 3 * time.Minute, 0},
		// Failed while validating: shows where installation would begin.
		{"default state is error", false, simulator.NodePoolFailure{Message: "m"}, 0, 2 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, defaultConfig())
			ch := e.readyCluster(t, 1)
			if tc.armed {
				if applied, err := e.sim.FailNodePool("cluster-1", "np1", tc.failure); err != nil || applied {
					t.Fatalf("arming: %v %v", applied, err)
				}
			}
			if _, err := e.client.PostNodePool(e.ctx, ch, nodePoolSpec()); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(tc.advance)
			if !tc.armed {
				if applied, err := e.sim.FailNodePool(clusterID(1), "np1", tc.failure); err != nil || !applied {
					t.Fatalf("failing: %v %v", applied, err)
				}
			}
			if tc.settle > 0 {
				if st, _ := e.client.GetNodePoolStatus(e.ctx, cs.NodePoolHref(ch, "np1")); st.State != cs.NodePoolStateValidating {
					t.Fatalf("state before the failure point = %q, want validating", st.State)
				}
				e.clock.Advance(tc.settle)
			}
			want := tc.failure.State
			if want == "" {
				want = cs.NodePoolStateError
			}
			st, err := e.client.GetNodePoolStatus(e.ctx, cs.NodePoolHref(ch, "np1"))
			if err != nil || st.State != want || st.Message != tc.failure.Message {
				t.Fatalf("status = %+v, %v; want %s %q", st, err, want, tc.failure.Message)
			}
		})
	}
}

func TestExternalAuthLifecycle(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	spec := cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://login.microsoftonline.com/t/v2.0", Audiences: []string{"aud"}}
	ea, err := e.client.PostExternalAuth(e.ctx, ch, spec)
	href := cs.ExternalAuthHref(ch, "entra")
	if err != nil || ea.ID != "entra" || ea.Href != href || ea.IssuerURL != spec.IssuerURL ||
		!reflect.DeepEqual(ea.Audiences, spec.Audiences) || ea.Status.State != cs.ExternalAuthStateReady {
		t.Fatalf("PostExternalAuth = %+v, %v", ea, err)
	}
	_, err = e.client.PostExternalAuth(e.ctx, ch, spec)
	wantCSError(t, err, 409, "already exists")

	ea, err = e.client.PatchExternalAuth(e.ctx, href, cs.ExternalAuthSpec{Audiences: []string{"aud", "aud2"}})
	if err != nil || ea.IssuerURL != spec.IssuerURL || !reflect.DeepEqual(ea.Audiences, []string{"aud", "aud2"}) {
		t.Fatalf("PatchExternalAuth = %+v, %v; want new audiences and the issuer kept", ea, err)
	}

	if applied, err := e.sim.FailExternalAuth("cluster-1", "entra", simulator.ExternalAuthFailure{Message: "issuer URL not reachable"}); err != nil || !applied {
		t.Fatalf("FailExternalAuth: %v %v", applied, err)
	}
	ea, err = e.client.GetExternalAuth(e.ctx, href)
	if err != nil || ea.Status.State != cs.ExternalAuthStateError || ea.Status.Message != "issuer URL not reachable" {
		t.Fatalf("after failure = %+v, %v", ea, err)
	}

	if err := e.client.DeleteExternalAuth(e.ctx, href); err != nil {
		t.Fatalf("DeleteExternalAuth: %v", err)
	}
	if ea, err := e.client.GetExternalAuth(e.ctx, href); err != nil || ea.Status.State != cs.ExternalAuthStateUninstalling {
		t.Fatalf("after delete = %+v, %v", ea, err)
	}
	e.clock.Advance(time.Minute)
	if _, err := e.client.GetExternalAuth(e.ctx, href); cs.Classify(err) != cs.Absent {
		t.Fatalf("after uninstall: %v, want 404", err)
	}

	// Armed before creation: created straight into error.
	if _, err := e.sim.FailExternalAuth(clusterID(1), "okta", simulator.ExternalAuthFailure{Message: "bad CA"}); err != nil {
		t.Fatal(err)
	}
	ea, err = e.client.PostExternalAuth(e.ctx, ch, cs.ExternalAuthSpec{ID: "okta", IssuerURL: "https://okta.example.com"})
	if err != nil || ea.Status.State != cs.ExternalAuthStateError || ea.Status.Message != "bad CA" {
		t.Fatalf("armed external auth = %+v, %v", ea, err)
	}
}

// TestClusterDeleteTakesChildren: children go uninstalling with the
// cluster, refuse their own deletes with the texts ARO-HCP tolerates, and
// are gone (404) once the cluster is.
func TestClusterDeleteTakesChildren(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	if _, err := e.client.PostNodePool(e.ctx, ch, nodePoolSpec()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PostExternalAuth(e.ctx, ch, cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://issuer.example.com"}); err != nil {
		t.Fatal(err)
	}
	cred, err := e.client.PostBreakGlassCredential(e.ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	np, ea := cs.NodePoolHref(ch, "np1"), cs.ExternalAuthHref(ch, "entra")
	if err := e.client.DeleteCluster(e.ctx, ch); err != nil {
		t.Fatal(err)
	}
	if st, err := e.client.GetNodePoolStatus(e.ctx, np); err != nil || st.State != cs.NodePoolStateUninstalling {
		t.Errorf("node pool during cluster delete = %+v, %v", st, err)
	}
	err = e.client.DeleteNodePool(e.ctx, np)
	wantCSError(t, err, 400, "Cannot delete node pool: its parent cluster must be in a deletable state", "'uninstalling'")
	err = e.client.DeleteExternalAuth(e.ctx, ea)
	wantCSError(t, err, 400, "Cannot delete ExternalAuth: its parent cluster must be in deletable state",
		"Parent cluster state: 'uninstalling'")
	_, err = e.client.PostNodePool(e.ctx, ch, cs.NodePoolSpec{ID: "np2", Replicas: 1})
	wantCSError(t, err, 400, "uninstalling")

	e.clock.Advance(time.Minute)
	checks := map[string]error{}
	_, checks["node pool"] = e.client.GetNodePool(e.ctx, np)
	_, checks["external auth"] = e.client.GetExternalAuth(e.ctx, ea)
	_, checks["credential"] = e.client.GetBreakGlassCredential(e.ctx, cred.Href)
	_, checks["credentials list"] = e.client.ListBreakGlassCredentials(e.ctx, ch)
	for what, err := range checks {
		if cs.Classify(err) != cs.Absent {
			t.Errorf("%s after cluster uninstall: %v, want 404", what, err)
		}
	}
}

func TestBreakGlassCredentials(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	created := e.clock.Now()
	cred, err := e.client.PostBreakGlassCredential(e.ctx, ch)
	prefix := cs.ClustersMgmtPrefix + "/clusters/" + clusterID(1) + cs.BreakGlassSegment
	if err != nil || !strings.HasPrefix(cred.Href, prefix) || cred.ID == "" || cred.Status != cs.CredentialStateCreated ||
		!strings.HasPrefix(cred.Username, "system:customer-break-glass:") || !cred.Expires.Equal(created.Add(24*time.Hour)) {
		t.Fatalf("PostBreakGlassCredential = %+v, %v", cred, err)
	}
	if n := e.sim.Ledger().Count("POST", cs.ClustersMgmtPrefix+"/clusters/{id}/break_glass_credentials"); n != 1 {
		t.Errorf("credential POSTs under clusters_mgmt = %d, want 1", n)
	}

	if cred.Kubeconfig != "" {
		t.Errorf("a credential not yet issued carries a kubeconfig")
	}
	e.clock.Advance(time.Minute)
	got, err := e.client.GetBreakGlassCredential(e.ctx, cred.Href)
	if err != nil || got.Status != cs.CredentialStateIssued || got.ID != cred.ID {
		t.Fatalf("after issuing = %+v, %v", got, err)
	}
	if !strings.Contains(got.Kubeconfig, "kind: Config") || !strings.Contains(got.Kubeconfig, "token: sha256~") ||
		!strings.Contains(got.Kubeconfig, got.Username) {
		t.Errorf("issued credential's kubeconfig = %q, want a kubeconfig for %s with a token", got.Kubeconfig, got.Username)
	}
	// The secret never renders through fmt or slog.
	for _, s := range []string{fmt.Sprint(got), fmt.Sprintf("%+v", got), fmt.Sprintf("%#v", got), logLine(got)} {
		if strings.Contains(s, "sha256~") || !strings.Contains(s, "[redacted]") {
			t.Errorf("credential rendered as %q; want the kubeconfig redacted", s)
		}
	}
	// An aro_hcp-prefixed href for the same credential is mapped too.
	if got, err := e.client.GetBreakGlassCredential(e.ctx, ch+cs.BreakGlassSegment+cred.ID); err != nil || got.ID != cred.ID {
		t.Errorf("aro_hcp-prefixed credential href = %+v, %v", got, err)
	}
	second, err := e.client.PostBreakGlassCredential(e.ctx, ch)
	if err != nil {
		t.Fatal(err)
	}

	if err := e.client.DeleteBreakGlassCredentials(e.ctx, ch); err != nil {
		t.Fatalf("DeleteBreakGlassCredentials: %v", err)
	}
	list, err := e.client.ListBreakGlassCredentials(e.ctx, ch)
	if err != nil || len(list) != 2 || list[0].ID != cred.ID || list[1].ID != second.ID {
		t.Fatalf("list = %+v, %v; want both credentials in creation order", list, err)
	}
	for _, c := range list {
		if c.Status != cs.CredentialStateAwaitingRevocation {
			t.Errorf("credential %s = %s, want awaiting_revocation", c.ID, c.Status)
		}
	}
	err = e.client.DeleteBreakGlassCredentials(e.ctx, ch)
	wantCSError(t, err, 400, "revocation has already been requested")
	_, err = e.client.PostBreakGlassCredential(e.ctx, ch)
	wantCSError(t, err, 400, "revocation is in progress")

	e.clock.Advance(time.Minute)
	got, err = e.client.GetBreakGlassCredential(e.ctx, cred.Href)
	if err != nil || got.Status != cs.CredentialStateRevoked {
		t.Fatalf("after revocation = %+v, %v", got, err)
	}
	if got.Kubeconfig != "" {
		t.Errorf("a revoked credential still carries a kubeconfig")
	}
	// Nothing left to revoke: a further revoke is a no-op.
	if err := e.client.DeleteBreakGlassCredentials(e.ctx, ch); err != nil {
		t.Errorf("revoke with nothing live: %v", err)
	}
	_, err = e.client.GetBreakGlassCredential(e.ctx, prefix+"missing")
	wantCSError(t, err, 404, "not found")
}

// TestBreakGlassExpiry: an unrevoked credential expires on the clock.
func TestBreakGlassExpiry(t *testing.T) {
	e := newEnv(t, defaultConfig())
	ch := e.readyCluster(t, 1)
	cred, err := e.client.PostBreakGlassCredential(e.ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(24 * time.Hour)
	if got, err := e.client.GetBreakGlassCredential(e.ctx, cred.Href); err != nil || got.Status != cs.CredentialStateExpired {
		t.Fatalf("after 24h = %+v, %v; want expired", got, err)
	}
}

func TestCredentialsListPaging(t *testing.T) {
	e := newEnv(t, defaultConfig(), simulator.WithPageSize(2))
	ch := e.readyCluster(t, 1)
	for range 5 {
		if _, err := e.client.PostBreakGlassCredential(e.ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	e.sim.ResetLedger()
	list, err := e.client.ListBreakGlassCredentials(e.ctx, ch)
	if err != nil || len(list) != 5 {
		t.Fatalf("list = %d items, %v; want 5", len(list), err)
	}
	if n := e.sim.Ledger().Count("GET", cs.ClustersMgmtPrefix+"/clusters/{id}/break_glass_credentials"); n != 3 {
		t.Errorf("list requests = %d, want 3 pages", n)
	}
}

func logLine(v any) string {
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("credential", "credential", v)
	return b.String()
}
