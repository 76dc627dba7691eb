package simulator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// fakeClock is a manual clock for the state machines.
type fakeClock = testsupport.Clock

func newFakeClock() *fakeClock {
	return testsupport.NewClock(testsupport.Epoch())
}

// testDurations makes every phase one minute, so a test advances the clock
// by whole minutes.
func testDurations() Durations {
	d := Durations{}
	for _, p := range d.fields() {
		*p = time.Minute
	}
	d.CredentialExpiry = 24 * time.Hour
	return d
}

type testSim struct {
	*Simulator
	clock *fakeClock
	url   string
}

func startSim(t *testing.T, opts ...Option) *testSim {
	t.Helper()
	clk := newFakeClock()
	sim := New(append([]Option{WithClock(clk), WithDurations(testDurations())}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		sim.Close()
		cancel()
	})
	url, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return &testSim{Simulator: sim, clock: clk, url: url}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// do sends one request; body may be "" for none.
func (s *testSim) do(t *testing.T, method, path, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s %s: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return string(data)
}

// path helpers
const (
	clustersPath = "/api/aro_hcp/v1alpha1/clusters"
	testID       = "2lg4nk0b1s1f7l3v5m0q2b4c6d8e0g2i"
)

func clusterPath(id string) string { return clustersPath + "/" + id }

func credsPath(id string) string {
	return "/api/clusters_mgmt/v1/clusters/" + id + "/break_glass_credentials"
}

// get walks a decoded JSON object along dotted keys.
func get(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[k]
	}
	return cur
}
