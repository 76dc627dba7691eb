package soak

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestListLiar: one id search in every so many answers with every item
// twice, the copy failed; name searches, GETs and the other id searches
// pass as CS answered them.
func TestListLiar(t *testing.T) {
	page := `{"kind":"ClusterList","page":1,"size":1,"total":1,"items":[{"kind":"Cluster","id":"a","state":"installing","status":{"kind":"ClusterStatus","state":"installing"}}]}`
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, page)
	})
	l := newListLiar(next, 3)
	get := func(path, search string) map[string]any {
		u := path
		if search != "" {
			u += "?search=" + url.QueryEscape(search)
		}
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		return out
	}
	lies := 0
	for i := 1; i <= 9; i++ {
		got := get(cs.ClustersPath, "id = 'a' or id = 'b'")
		items := got["items"].([]any)
		switch {
		case i%3 != 0 && len(items) != 1:
			t.Errorf("search %d: %d items, want CS's answer", i, len(items))
		case i%3 == 0:
			copy := items[1].(map[string]any)
			if len(items) != 2 || copy["state"] != "error" || copy["status"].(map[string]any)["state"] != "error" || got["size"] != 2.0 {
				t.Errorf("search %d: %v, want every item twice, the copy failed", i, got)
			}
			lies++
		}
	}
	for _, tc := range [][2]string{{cs.ClustersPath, "azure.resource_name = 'a'"}, {cs.ClusterHref("a"), ""}} {
		for range 3 {
			if n := len(get(tc[0], tc[1])["items"].([]any)); n != 1 {
				t.Errorf("%s %q: %d items, want CS's answer", tc[0], tc[1], n)
			}
		}
	}
	if searches, lied := l.counts(); searches != 9 || lied != lies || lies != 3 {
		t.Errorf("counts %d searches, %d lies; want 9 and 3", searches, lied)
	}
}
