package testsupport

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/hcpops/hcpops/harness/csfaults"
)

// NewCSFaultsProxy is a csfaults.Proxy in front of a Clusters Service on
// 127.0.0.1 (the simulator), for tests that reach it over a socket; it
// returns the proxy and the URL to name, and stops with the test.
func NewCSFaultsProxy(t testing.TB, target string) (*csfaults.Proxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := csfaults.New(httputil.NewSingleHostReverseProxy(u))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}
