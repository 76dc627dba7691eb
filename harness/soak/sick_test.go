package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

func TestSickCS(t *testing.T) {
	sim := simulator.New()
	defer sim.Close()
	done := make(chan struct{})
	sick := newSickCS(sim, sickSet{
		clusters: map[string]sickness{"Soak-C1-Sick-Hang": sickHang, "soak-c2-sick-garbage": sickGarbage, "soak-c3-sick-stuck": sickHangCreated},
		pools:    map[string]sickness{"NP-Sick-C9": sickHangCreated},
	}, done)
	var serverLog syncBuffer // a panic in a handler lands here
	// arrived and served hear of every request as it reaches sick and as
	// sick is done with it (a panic logged first), so the test waits for
	// those rather than for time to pass.
	arrived, served := make(chan string, 64), make(chan string, 64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.Method + " " + r.URL.RequestURI()
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(&serverLog, "panic serving %s: %v", r.URL, p)
			}
			served <- r.Method + " " + r.URL.RequestURI()
		}()
		sick.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = log.New(&serverLog, "", 0)
	awaitRequest := func(ch <-chan string, want string) {
		t.Helper()
		for {
			select {
			case got := <-ch:
				if got == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s within 10s", want)
			}
		}
	}
	srv.Start()
	defer srv.Close()

	call := func(method, path, body string, timeout time.Duration) (int, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		must(t, err)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), err
	}
	create := func(id, name string) string {
		return `{"kind":"Cluster","id":"` + id + `","name":"` + name +
			`","azure":{"subscription_id":"s","resource_group_name":"rg","resource_name":"` + name + `"}}`
	}

	// A sick-hang cluster: its create and everything under its href never
	// answer, and nothing reaches CS.
	for _, r := range [][3]string{
		{http.MethodPost, cs.ClustersPath, create("hang1", "soak-c1-sick-hang")},
		{http.MethodGet, cs.ClusterHref("hang1"), ""},
		{http.MethodGet, cs.ClusterHref("hang1") + "/node_pools/np1", ""},
	} {
		if _, _, err := call(r[0], r[1], r[2], 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s %s on a sick-hang cluster: %v, want no answer", r[0], r[1], err)
		}
	}
	search := func(name string) string {
		return cs.ClustersPath + "?search=" + url.QueryEscape("azure.subscription_id = 's' and azure.resource_group_name = 'rg' and azure.resource_name = '"+name+"'")
	}
	if _, _, err := call(http.MethodGet, search("soak-c1-sick-hang"), "", 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the adoption search for a sick-hang cluster: %v, want no answer", err)
	}
	if n := sim.Ledger().Total(); n != 0 {
		t.Errorf("CS saw %d requests of the sick-hang cluster, want none", n)
	}
	if status, body, err := call(http.MethodGet, search("soak-c2-sick-garbage"), "", 5*time.Second); err != nil || status != http.StatusOK || strings.Contains(body, "ClusterList") {
		t.Errorf("the adoption search for a sick-garbage cluster: %d %q %v, want 200 with garbage", status, body, err)
	}
	if status, body, err := call(http.MethodGet, search("soak-c3-sick-stuck"), "", 5*time.Second); err != nil || status != http.StatusOK || !strings.Contains(body, "ClusterList") {
		t.Errorf("the adoption search for a sick-stuck cluster: %d %q %v, want CS's list: it is part of the create", status, body, err)
	}

	// A sick-garbage cluster: CS serves the request, the client gets 200
	// and a body that is no cluster.
	for i, r := range [][3]string{
		{http.MethodPost, cs.ClustersPath, create("garbage1", "soak-c2-sick-garbage")},
		{http.MethodGet, cs.ClusterHref("garbage1"), ""},
		{http.MethodGet, cs.ClusterHref("garbage1"), ""},
	} {
		status, body, err := call(r[0], r[1], r[2], 5*time.Second)
		var c struct {
			ID string `json:"id"`
		}
		if err != nil || status != http.StatusOK || json.Unmarshal([]byte(body), &c) == nil && c.ID == "garbage1" {
			t.Errorf("request %d %s %s on a sick-garbage cluster: %d %q %v, want 200 with garbage", i, r[0], r[1], status, body, err)
		}
	}
	if got := sim.Ledger().Count(http.MethodPost, simClusterCreate); got != 1 {
		t.Errorf("CS saw %d cluster POSTs, want the garbled one", got)
	}

	// A sick-stuck cluster: CS creates it, then never answers about it.
	status, _, err := call(http.MethodPost, cs.ClustersPath, create("stuck1", "soak-c3-sick-stuck"), 5*time.Second)
	if err != nil || status != http.StatusCreated {
		t.Errorf("the create of a sick-stuck cluster: %d %v, want CS's 201", status, err)
	}
	if got := sim.Ledger().Count(http.MethodPost, simClusterCreate); got != 2 {
		t.Errorf("CS saw %d cluster POSTs, want the sick-stuck one too", got)
	}
	if _, _, err := call(http.MethodGet, cs.ClusterHref("stuck1"), "", 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GET of a sick-stuck cluster: %v, want no answer", err)
	}

	// Healthy clusters and lists pass untouched.
	if status, _, err := call(http.MethodGet, cs.ClusterHref("healthy1"), "", 5*time.Second); err != nil || status != http.StatusNotFound {
		t.Errorf("GET of a healthy unknown cluster: %d %v, want CS's 404", status, err)
	}
	// A list leaves the sick clusters out and serves the healthy ones.
	if status, _, err := call(http.MethodPost, cs.ClustersPath, create("healthy2", "soak-c4-full"), 5*time.Second); err != nil || status != http.StatusCreated {
		t.Fatalf("a healthy create: %d %v", status, err)
	}
	status, body, err := call(http.MethodGet, cs.ClustersPath, "", 5*time.Second)
	var list struct {
		Kind  string `json:"kind"`
		Size  int    `json:"size"`
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err != nil || status != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || list.Kind != "ClusterList" {
		t.Fatalf("the cluster list: %d %q %v", status, body, err)
	}
	var ids []string
	for _, it := range list.Items {
		ids = append(ids, it.ID)
	}
	if got := strings.Join(ids, ","); got != "healthy2" || list.Size != 1 {
		t.Errorf("listed %q (size %d), want only the healthy cluster", got, list.Size)
	}

	// A sick node pool of a healthy cluster is created, then never
	// answered about; its sibling and the pool list are served.
	sim.Advance(time.Hour) // the cluster is ready for pools
	pools := cs.ClusterHref("healthy2") + "/node_pools"
	for _, id := range []string{"np-sick-c9", "np1"} {
		if status, body, err := call(http.MethodPost, pools, `{"kind":"NodePool","id":"`+id+`","replicas":2}`, 5*time.Second); err != nil || status != http.StatusCreated {
			t.Fatalf("creating node pool %s: %d %q %v, want CS's 201", id, status, body, err)
		}
	}
	if _, _, err := call(http.MethodGet, pools+"/np-sick-c9", "", 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GET of a sick node pool: %v, want no answer", err)
	}
	if status, _, err := call(http.MethodGet, pools+"/np1", "", 5*time.Second); err != nil || status != http.StatusOK {
		t.Errorf("GET of its healthy sibling: %d %v", status, err)
	}
	status, body, err = call(http.MethodGet, pools, "", 5*time.Second)
	if err != nil || status != http.StatusOK || strings.Contains(body, "np-sick-c9") || !strings.Contains(body, `"np1"`) {
		t.Errorf("the pool list: %d %q %v, want np1 without the sick pool", status, body, err)
	}
	// A list the client gives up on before CS answers is dropped quietly.
	must(t, sim.SetLatency(simulator.Latency{Fixed: 300 * time.Millisecond}))
	late := cs.ClustersPath + "?page=1" // this request's own URI, to wait for
	if _, _, err := call(http.MethodGet, late, "", 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a list under 300ms of latency answered within 50ms: %v", err)
	}
	awaitRequest(served, http.MethodGet+" "+late) // CS's late answer has met a client gone
	must(t, sim.SetLatency(simulator.Latency{}))
	if l := serverLog.String(); l != "" {
		t.Errorf("the server logged %q", l)
	}
	if hung, garbled := sick.sickCounts(); hung != 6 || garbled != 4 {
		t.Errorf("counts: %d hung, %d garbled; want 6 and 4", hung, garbled)
	}

	// The end of the run releases hung requests.
	answered := make(chan error, 1)
	last := cs.ClusterHref("hang1") + "?last=1" // its own URI, to wait for
	go func() {
		_, _, err := call(http.MethodGet, last, "", 10*time.Second)
		answered <- err
	}()
	awaitRequest(arrived, http.MethodGet+" "+last)
	close(done)
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("the hung request, released at the end of the run: %v, want an answer", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a hung request outlived the end of the run")
	}
}
