package csfaults

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestIDlessCacheServesAnotherObjectsAnswer(t *testing.T) {
	behind := 0
	cs := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		behind++
		if r.URL.Path == "/api/aro_hcp/v1alpha1/clusters/missing" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"path":"` + r.URL.Path + `"}`))
	})
	c := NewIDlessCache(cs)
	get := func(method, target string) string {
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec.Body.String()
	}
	const a, b = "/api/aro_hcp/v1alpha1/clusters/a/status", "/api/aro_hcp/v1alpha1/clusters/b/status"
	get(http.MethodGet, "/api/aro_hcp/v1alpha1/clusters/missing") // an error answer is not kept
	if got := get(http.MethodGet, a); got != `{"path":"`+a+`"}` {
		t.Fatalf("first read = %s, want CS's own", got)
	}
	if got := get(http.MethodGet, b); got != `{"path":"`+a+`"}` {
		t.Fatalf("read of b = %s, want a's cached answer", got)
	}
	if got := get(http.MethodGet, "/api/aro_hcp/v1alpha1/clusters/c"); got != `{"path":"/api/aro_hcp/v1alpha1/clusters/c"}` {
		t.Fatalf("read of c = %s: the error answer for missing was cached", got)
	}
	if got := get(http.MethodPost, b); got != `{"path":"`+b+`"}` {
		t.Fatalf("write = %s, want it passed", got)
	}
	if c.Misanswered() != 1 || behind != 4 {
		t.Fatalf("misanswered %d, reached CS %d times; want 1 and 4", c.Misanswered(), behind)
	}
	c.Reset()
	if got := get(http.MethodGet, b); got != `{"path":"`+b+`"}` {
		t.Fatalf("after Reset = %s, want CS's own", got)
	}
}

func TestIDlessKey(t *testing.T) {
	for in, want := range map[string]string{
		"/api/aro_hcp/v1alpha1/clusters/x/node_pools/np1/status":      "/api/aro_hcp/v1alpha1/clusters/{id}/node_pools/{id}/status?",
		"/api/aro_hcp/v1alpha1/clusters?search=id+%3D+%27x%27&page=1": "/api/aro_hcp/v1alpha1/clusters?page=1",
		"/api/clusters_mgmt/v1/clusters/x/break_glass_credentials/y":  "/api/clusters_mgmt/v1/clusters/{id}/break_glass_credentials/{id}?",
	} {
		u, _ := url.Parse(in)
		if got := IDlessKey(u); got != want {
			t.Errorf("IDlessKey(%s) = %s, want %s", in, got, want)
		}
	}
}
