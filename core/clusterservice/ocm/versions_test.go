package ocm

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/simulator"
)

// TestVersionsThroughTheClient: the simulator's versions API answers an
// ocm-sdk-go client in CS's wire format, paged as CS pages.
func TestVersionsThroughTheClient(t *testing.T) {
	e := newEnv(t, defaultConfig(), simulator.WithPageSize(2))
	all, err := e.client.ListVersions(e.ctx, "")
	if err != nil {
		t.Fatalf("ListVersions: %v", err)
	}
	var ids []string
	for _, v := range all {
		ids = append(ids, v.ID)
	}
	want := []string{"openshift-v4.20.10", "openshift-v4.20.25", "openshift-v4.20.8", "openshift-v4.21.20", "openshift-v4.22.1", "openshift-v4.22.1-candidate"}
	if !slices.Equal(ids, want) {
		t.Fatalf("versions = %v, want %v (pages of two)", ids, want)
	}
	def := all[3]
	if !def.Default || !def.Enabled || def.RawID != "4.21.20" || def.ChannelGroup != "stable" ||
		!def.EndOfLife.Equal(time.Date(2027, time.August, 1, 0, 0, 0, 0, time.UTC)) || !slices.Equal(def.AvailableUpgrades, []string{"4.22.1"}) {
		t.Errorf("default version = %+v", def)
	}

	candidates, err := e.client.ListVersions(e.ctx, "channel_group = 'candidate' and enabled = 'true'")
	if err != nil || len(candidates) != 1 || candidates[0].ID != "openshift-v4.22.1-candidate" {
		t.Errorf("candidate versions = %+v, %v", candidates, err)
	}
	if _, err := e.client.ListVersions(e.ctx, "colour = 'blue'"); err == nil {
		t.Error("a search on an unknown field succeeded")
	} else {
		wantCSError(t, err, http.StatusBadRequest, "colour")
	}

	got, err := e.client.GetVersion(e.ctx, "openshift-v4.20.25")
	if err != nil || got.RawID != "4.20.25" || got.Default {
		t.Errorf("GetVersion = %+v, %v", got, err)
	}
	_, err = e.client.GetVersion(e.ctx, "openshift-v4.99.0")
	wantCSError(t, err, http.StatusNotFound, "openshift-v4.99.0")
}

// TestVersionsWireFormat: the list is CS's envelope of Version objects,
// each with its kind and href, as a frontend's client expects.
func TestVersionsWireFormat(t *testing.T) {
	e := newEnv(t, defaultConfig())
	resp, err := http.Get(e.url + simulator.VersionsPath + "?search=" + "id%20%3D%20%27openshift-v4.22.1%27")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var list struct {
		Kind  string           `json:"kind"`
		Total int              `json:"total"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, body %s: %v", resp.StatusCode, raw, err)
	}
	if list.Kind != "VersionList" || list.Total != 1 || len(list.Items) != 1 {
		t.Fatalf("list = %s", raw)
	}
	item := list.Items[0]
	for k, v := range map[string]any{"kind": "Version", "id": "openshift-v4.22.1",
		"href": "/api/aro_hcp/v1alpha1/versions/openshift-v4.22.1", "raw_id": "4.22.1", "channel_group": "stable",
		"enabled": true, "hosted_control_plane_enabled": true} {
		if item[k] != v {
			t.Errorf("item.%s = %v, want %v (%s)", k, item[k], v, raw)
		}
	}
}
