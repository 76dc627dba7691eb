package csfaults

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFaults(t *testing.T) {
	cs := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Cluster","id":"abc"}`))
	})
	f := New(cs)
	serve := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}
	const obj = "/api/aro_hcp/v1alpha1/clusters/abc"
	if rec := serve(http.MethodGet, obj); rec.Code != http.StatusOK || f.Answered() != 0 {
		t.Fatalf("healthy: %d, answered %d; want CS's answer", rec.Code, f.Answered())
	}

	f.Set(Misrouted)
	rec := serve(http.MethodGet, obj+"/status")
	var e map[string]any
	if rec.Code != http.StatusNotFound || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e["kind"] != "Error" || e["id"] != "404" ||
		e["code"] != "CLUSTERS-MGMT-404" || e["reason"] == "" {
		t.Errorf("misrouted object read = %d %s, want CS's own 404", rec.Code, rec.Body)
	}
	for _, list := range []string{"/api/aro_hcp/v1alpha1/clusters?search=id+%3D+%27abc%27", obj + "/node_pools"} {
		rec := serve(http.MethodGet, list)
		var l struct {
			Kind  string
			Items []any
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &l) != nil || len(l.Items) != 0 || !strings.HasSuffix(l.Kind, "List") {
			t.Errorf("misrouted list %s = %d %s, want an empty list", list, rec.Code, rec.Body)
		}
	}
	if rec := serve(http.MethodDelete, obj); rec.Code != http.StatusOK {
		t.Errorf("misrouted write = %d, want it passed to CS", rec.Code)
	}
	if rec := serve(http.MethodGet, "/_sim/clock"); rec.Code != http.StatusOK {
		t.Errorf("simulator admin route = %d, want it passed", rec.Code)
	}

	f.Set(Gateway)
	seen := map[string]bool{}
	for range len(gatewayReads) {
		rec := serve(http.MethodGet, obj)
		if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), `"kind"`) {
			t.Errorf("gateway read = %d %s, want a 404 that is not CS's", rec.Code, rec.Body)
		}
		seen[rec.Header().Get("Content-Type")+" "+rec.Body.String()] = true
	}
	if len(seen) != len(gatewayReads) {
		t.Errorf("gateway reads answered %d distinct bodies, want %d", len(seen), len(gatewayReads))
	}
	writes := map[int]bool{}
	for range len(gatewayWrites) {
		rec := serve(http.MethodPost, "/api/aro_hcp/v1alpha1/clusters")
		if rec.Code < 400 || strings.Contains(rec.Body.String(), `"kind"`) {
			t.Errorf("gateway write = %d %s, want an error answer that is not CS's", rec.Code, rec.Body)
		}
		writes[rec.Code] = true
	}
	for _, status := range []int{400, 404, 409, 421, 423, 425, 502} {
		if !writes[status] {
			t.Errorf("gateway writes never answered %d", status)
		}
	}
	f.Set(Healthy)
	if rec := serve(http.MethodGet, obj); rec.Code != http.StatusOK {
		t.Errorf("healed: %d, want CS's answer", rec.Code)
	}
}
