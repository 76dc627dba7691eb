package simtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/simulator"
)

// TestStartServesOnLoopbackUntilTheTestEnds: the simulator Start serves
// stops with its test. Whether it answered is read from its own ledger:
// once the port is free, another package's server run beside this one
// may take it and answer (make test saw a 404 so).
func TestStartServesOnLoopbackUntilTheTestEnds(t *testing.T) {
	var (
		base string
		sim  *simulator.Simulator
	)
	t.Run("inner", func(t *testing.T) {
		sim, base = Start(t)
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
	served := sim.Ledger().Total()
	if served == 0 {
		t.Fatal("the simulator's ledger counts no request it served")
	}
	c := &http.Client{Timeout: 5 * time.Second}
	if resp, err := c.Get(base + "/api/clusters_mgmt/v1/clusters"); err == nil {
		resp.Body.Close()
	}
	if n := sim.Ledger().Total(); n != served {
		t.Errorf("simulator served %d more requests after its test ended", n-served)
	}
}
