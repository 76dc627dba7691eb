package simulator

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpgradeOverTheWire: the upgrade policy routes speak CS's wire
// format, the /_sim/ control fails an upgrade under way with its message,
// and a failure for a cluster that does not exist is refused.
func TestUpgradeOverTheWire(t *testing.T) {
	s := startSim(t)
	cluster := `{"id":"c1","name":"c1","version":{"id":"4.20"},` +
		`"azure":{"subscription_id":"s","resource_group_name":"rg","resource_name":"c1"}}`
	policies := clusterPath("c1") + "/control_plane_upgrade_policies"
	steps := []struct {
		method, path, body string
		advance            time.Duration
		status             int
		contains           string
	}{
		{"POST", "/_sim/clusters/nope/upgrade/fail", `{"message":"x"}`, 0, 400, "no live cluster"},
		{"POST", clustersPath, cluster, 0, 201, `"raw_id": "4.20.25"`},
		{"POST", policies, `{"version":"4.21.20"}`, 0, 400, "is in state 'validating', can't upgrade"},
		{"POST", policies, `{"version":"4.21.20"}`, 3 * time.Minute, 201, `"value": "scheduled"`},
		{"POST", policies, `{"version":"4.21.20"}`, 0, 400, "already an upgrade policy"},
		{"POST", "/_sim/clusters/c1/upgrade/fail", `{"message":"etcd quorum lost"}`, time.Minute, 200, `"failed_now":true`},
		{"GET", policies, "", 0, 200, `"description": "etcd quorum lost"`},
		{"GET", clusterPath("c1"), "", 0, 200, `"raw_id": "4.20.25"`},
		{"POST", policies, `{"version":"4.22.1"}`, 0, 400, "no upgrade path"},
		{"POST", policies, `{"version":"4.21.20"}`, 0, 201, `"value": "scheduled"`},
		{"GET", clusterPath("c1"), "", 2 * time.Minute, 200, `"raw_id": "4.21.20"`},
	}
	for i, st := range steps {
		s.clock.Advance(st.advance)
		r := s.do(t, st.method, st.path, st.body)
		if r.status != st.status || !strings.Contains(string(r.body), st.contains) {
			t.Fatalf("step %d %s %s: %d %s; want %d containing %s", i, st.method, st.path, r.status, r.body, st.status, st.contains)
		}
	}
}

// TestSnapshotKeepsAnUpgradeUnderWay: an upgrade policy posted before a
// restart of dev finishes after it, on the restored timeline.
func TestSnapshotKeepsAnUpgradeUnderWay(t *testing.T) {
	a := startSim(t)
	cluster := `{"id":"c1","name":"c1","version":{"id":"4.20"},` +
		`"azure":{"subscription_id":"s","resource_group_name":"rg","resource_name":"c1"}}`
	policies := clusterPath("c1") + "/control_plane_upgrade_policies"
	if r := a.do(t, "POST", clustersPath, cluster); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	a.clock.Advance(3 * time.Minute)
	if r := a.do(t, "POST", policies, `{"version":"4.21.20"}`); r.status != 201 {
		t.Fatalf("upgrade policy: %d %s", r.status, r.body)
	}
	path := filepath.Join(t.TempDir(), SnapshotFile)
	if err := a.SaveSnapshot(path); err != nil {
		t.Fatal(err)
	}
	b := startSim(t)
	b.clock.Set(a.clock.Now())
	if ok, err := b.LoadSnapshot(path); err != nil || !ok {
		t.Fatalf("LoadSnapshot: %v %v", ok, err)
	}
	if r := b.do(t, "GET", policies, ""); r.status != 200 || !strings.Contains(string(r.body), "4.21.20") {
		t.Fatalf("policies after restore: %d %s", r.status, r.body)
	}
	b.clock.Advance(2 * time.Minute)
	if r := b.do(t, "GET", clusterPath("c1"), ""); !strings.Contains(string(r.body), `"raw_id": "4.21.20"`) {
		t.Fatalf("restored cluster after its upgrade time: %s; want 4.21.20", r.body)
	}
}
