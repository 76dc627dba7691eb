package csfaults

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// NewTestProxy is a Proxy in front of a Clusters Service on 127.0.0.1
// (the simulator), for tests that reach it over a socket; it returns the
// proxy and the URL to name, and stops with the test.
func NewTestProxy(t testing.TB, target string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := New(httputil.NewSingleHostReverseProxy(u))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}
