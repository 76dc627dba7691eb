package ocm

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPageLimit: a list page's body limit comes from its own request (the
// page size it asks, CS's default when none), never from its context;
// anything but a GET of a list has none.
func TestPageLimit(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           int64 // 0: no limit
	}{
		{http.MethodGet, "/api/aro_hcp/v1alpha1/clusters?page=1&search=id+in+%28%27a%27%29&size=3", pageBytes(3)},
		{http.MethodGet, "/api/aro_hcp/v1alpha1/clusters?page=2", pageBytes(listPageSize)},
		{http.MethodGet, "/api/aro_hcp/v1alpha1/clusters/abc/node_pools?size=nope", pageBytes(listPageSize)},
		{http.MethodGet, "/api/aro_hcp/v1alpha1/clusters/abc/control_plane_upgrade_policies?page=1", pageBytes(listPageSize)},
		{http.MethodGet, "/api/clusters_mgmt/v1/clusters/abc/break_glass_credentials?page=1", pageBytes(listPageSize)},
		{http.MethodGet, "/api/aro_hcp/v1alpha1/versions?page=1&size=100", pageBytes(100)},
		{http.MethodGet, "/api/aro_hcp/v1alpha1/clusters/abc", 0},
		{http.MethodGet, "/api/clusters_mgmt/v1/clusters/abc/break_glass_credentials/c1", 0},
		{http.MethodPost, "/api/aro_hcp/v1alpha1/clusters", 0},
	} {
		got, ok := pageLimit(httptest.NewRequest(tc.method, tc.target, nil))
		if !ok {
			got = 0
		}
		if got != tc.want {
			t.Errorf("%s %s: limit %d, want %d", tc.method, tc.target, got, tc.want)
		}
	}
}
