package simulator

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

func TestAdminAPI(t *testing.T) {
	s := startSim(t)
	steps := []struct {
		method, path, body string
		status             int
		contains           string
	}{
		{"PUT", "/_sim/faults", `{"error_rate":1,"error_status":502}`, 200, `"error_rate":1`},
		{"GET", "/_sim/ledger", "", 200, `"by_pattern":{}`}, // admin is neither faulted nor counted
		{"GET", clusterPath("x"), "", 502, "Simulated fault"},
		{"PUT", "/_sim/faults", `{}`, 200, `"error_rate":0`},
		{"PUT", "/_sim/faults", `{"error_rate":2}`, 400, "outside [0,1]"},
		{"PUT", "/_sim/faults", `{"typo":1}`, 400, `unknown field \"typo\"`},
		{"POST", "/_sim/faults/next", `{"count":1,"status":429}`, 200, `"status":429`},
		{"GET", clusterPath("x"), "", 429, "Simulated fault"},
		{"PUT", "/_sim/durations", `{"cluster_installing":"3m"}`, 200, `"cluster_installing":"3m0s"`},
		{"PUT", "/_sim/durations", `{"bogus":"3m"}`, 400, `unknown duration \"bogus\"`},
		{"PUT", "/_sim/durations", `{"cluster_pending":"later"}`, 400, "cluster_pending"},
		{"PUT", "/_sim/latency", `{"fixed":"1ms","jitter":"2ms"}`, 200, `"jitter":"2ms"`},
		{"PUT", "/_sim/latency", `{"fixed":"x"}`, 400, "latency fixed"},
		{"PUT", "/_sim/latency", `{}`, 200, `"fixed":"0s"`},
		{"POST", "/_sim/advance", `{"by":"-1m"}`, 400, "non-negative"},
		{"POST", "/_sim/clusters/dev-cluster/fail", `{"code":"OCM3055","message":"boom"}`, 200, `"applied":false`},
		{"POST", "/_sim/clusters/dev-cluster/fail", `{"code":"OCM3055","failed_checks":2}`, 400, "needs code OCM4001"},
		{"POST", "/_sim/clusters/dev-cluster/node_pools/np1/fail", `{"state":"recoverable_error","message":"m"}`, 200, `"applied":false`},
		{"POST", "/_sim/clusters/dev-cluster/node_pools/np1/fail", `{"state":"ready"}`, 400, "neither"},
		{"POST", "/_sim/clusters/dev-cluster/external_auths/entra/fail", `{"message":"issuer down"}`, 200, `"applied":false`},
		{"GET", "/_sim/nothing", "", 404, "No simulator control"},
	}
	for i, st := range steps {
		r := s.do(t, st.method, st.path, st.body)
		if r.status != st.status || !strings.Contains(string(r.body), st.contains) {
			t.Fatalf("step %d %s %s: %d %s; want %d containing %s", i, st.method, st.path, r.status, r.body, st.status, st.contains)
		}
	}
	if s.Durations().ClusterInstalling != 3*time.Minute {
		t.Errorf("durations not applied: %+v", s.Durations())
	}
	if l := s.Ledger(); l.Total() != 2 {
		t.Errorf("ledger counted %d requests, want only the 2 API ones: %+v", l.Total(), l)
	}

	// The armed failures fire on creation: the cluster fails where it would
	// start installing, and so do its node pool and external auth.
	if r := s.do(t, "POST", clustersPath, fixture(t, "cluster.json")); r.status != 201 {
		t.Fatalf("POST cluster: %d %s", r.status, r.body)
	}
	if r := s.do(t, "POST", "/_sim/advance", `{"by":"2m"}`); r.status != 200 {
		t.Fatalf("advance: %d %s", r.status, r.body)
	}
	st := s.do(t, "GET", clusterPath(testID)+"/status", "").json(t)
	if st["state"] != "error" || st["provision_error_code"] != "OCM3055" || st["provision_error_message"] != "boom" {
		t.Fatalf("status after armed failure = %v", st)
	}
	if r := s.do(t, "PATCH", clusterPath(testID), `{"kind":"Cluster"}`); r.status != 400 {
		t.Errorf("PATCH of a failed cluster = %d, want 400", r.status)
	}
	if r := s.do(t, "POST", clusterPath(testID)+"/node_pools", fixture(t, "nodepool.json")); r.status != 400 {
		t.Errorf("node pool on a failed cluster = %d, want 400", r.status)
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "localhost:0", ":0", "10.0.0.1:80", "no-port"} {
		if _, err := New().Start(context.Background(), addr); err == nil {
			t.Errorf("Start(%q) = nil error, want a refusal", addr)
		}
	}
}

func TestMainCommand(t *testing.T) {
	bad := [][]string{
		{"--listen", "0.0.0.0:8000"},
		{"--durations", "bogus=1s"},
		{"--error-rate", "2"},
		{"--latency", "-1s"},
		{"--page-size", "0"},
		{"--nope"},
		{"extra"},
	}
	for _, args := range bad {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Main(ctx, args, io.Discard); err == nil {
			t.Errorf("Main(%q) = nil, want an error", args)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stdout testsupport.Buffer
	go func() {
		done <- Main(ctx, []string{"--listen", addr, "--durations", "cluster_installing=7s", "--seed", "3"}, &stdout)
	}()
	s := &testSim{url: "http://" + addr}
	stdout.AwaitText(t, "cs-simulator: serving "+s.url) // written once it listens
	r, err := tryGet(s.url + "/_sim/durations")
	if err != nil || r.status != 200 || !strings.Contains(string(r.body), `"cluster_installing":"7s"`) {
		t.Fatalf("simulator from Main: %v %d %s", err, r.status, r.body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Main returned %v after cancel", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Main did not return after cancel")
	}
}

func tryGet(url string) (response, error) {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data}, err
}

// GET /_sim/ lists every admin route; each one it lists is served, and
// docs/simulator.md documents exactly those.
func TestAdminIndex(t *testing.T) {
	s := startSim(t)
	r := s.do(t, "GET", "/_sim/", "")
	var index struct {
		Routes []adminRoute `json:"routes"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &index) != nil || len(index.Routes) < 12 {
		t.Fatalf("GET /_sim/ = %d %s", r.status, r.body)
	}
	doc, err := os.ReadFile("../../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range index.Routes {
		if rt.About == "" {
			t.Errorf("%s %s has no description", rt.Method, rt.Path)
		}
		if !strings.Contains(string(doc), "| `"+rt.Method+"` | `"+rt.Path+"` |") {
			t.Errorf("docs/simulator.md does not document %s %s", rt.Method, rt.Path)
		}
		path := strings.NewReplacer("{key}", "c1", "{id}", "np1").Replace(rt.Path)
		if got := s.do(t, rt.Method, path, "{}"); got.status == 404 && strings.Contains(string(got.body), "No simulator control") {
			t.Errorf("%s %s is listed but not served", rt.Method, rt.Path)
		}
	}
	if n := strings.Count(string(doc), "| `/_sim/"); n != len(index.Routes) {
		t.Errorf("docs/simulator.md documents %d admin routes, the simulator lists %d", n, len(index.Routes))
	}
}

func TestMainHelp(t *testing.T) {
	var out strings.Builder
	if err := Main(context.Background(), []string{"-h"}, &out); err != nil {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"usage: hcpopsctl cs-simulator", "-listen", "-error-rate", "fraction of CS requests", "GET /_sim/"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h output lacks %q:\n%s", want, out.String())
		}
	}
}
