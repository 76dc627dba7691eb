package simtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestStartServesOnLoopbackUntilTheTestEnds(t *testing.T) {
	var base string
	t.Run("inner", func(t *testing.T) {
		_, base = Start(t)
		u, err := url.Parse(base)
		if err != nil || !strings.HasPrefix(u.Host, "127.0.0.1:") {
			t.Fatalf("URL %q (%v), want a 127.0.0.1 address", base, err)
		}
		resp, err := http.Get(base + "/api/clusters_mgmt/v1/clusters")
		if err != nil {
			t.Fatalf("simulator not serving: %v", err)
		}
		resp.Body.Close()
	})
	c := &http.Client{Timeout: 5 * time.Second}
	if resp, err := c.Get(base + "/api/clusters_mgmt/v1/clusters"); err == nil {
		resp.Body.Close()
		t.Errorf("simulator still answers (%d) after its test ended", resp.StatusCode)
	}
}
