package soak

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestCSLedgerCountsCreatesByObject(t *testing.T) {
	// A stand-in CS whose answers the test picks per request.
	answers := map[string][]int{}
	fake := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		status := http.StatusOK
		if q := answers[key]; len(q) > 0 {
			status, answers[key] = q[0], q[1:]
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if strings.HasSuffix(r.URL.Path, "/break_glass_credentials") && status == http.StatusCreated {
			fmt.Fprintf(w, `{"kind":"BreakGlassCredential","id":"b%d","href":"/api/clusters_mgmt/v1/clusters/C1/break_glass_credentials/B%d"}`, len(answers[key]), len(answers[key]))
		}
	})
	l := newCSLedger(fake)
	url, stop, err := serveLoopback(l)
	must(t, err)
	defer stop()

	const clusters = "/api/aro_hcp/v1alpha1/clusters"
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		must(t, err)
		resp.Body.Close()
	}
	answers["POST "+clusters] = []int{503, 429, 201, 201, 409}
	post(clusters, `{"id":"ok"}`)                 // 503: a retry, not a duplicate
	post(clusters, `{"id":"ok"}`)                 // 429: the same
	post(clusters, `{"id":"ok","name":"one"}`)    // 201
	post(clusters, `{"id":"twice","name":"two"}`) // 201
	post(clusters, `{"id":"TWICE","name":"two"}`) // 409: asked again, adopted
	answers["POST "+clusters] = append(answers["POST "+clusters], 201)
	post(clusters, `{"id":"other","name":"ONE"}`) // 201: a second cluster for one name
	answers["POST "+clusters+"/c1/node_pools"] = []int{201, 201}
	post(clusters+"/c1/node_pools", `{"id":"np1"}`)
	post(clusters+"/c1/node_pools", `{"id":"np1"}`) // a second create of the same pool
	answers["POST "+clusters+"/c1/external_auth_config/external_auths"] = []int{500}
	// Refused and never created: no duplicate (the outcome checks judge whether
	// its operation should have created it).
	post(clusters+"/c1/external_auth_config/external_auths", `{"id":"ea1"}`)
	answers["POST /api/clusters_mgmt/v1/clusters/c1/break_glass_credentials"] = []int{201, 201}
	post("/api/clusters_mgmt/v1/clusters/c1/break_glass_credentials", `{}`)
	post("/api/clusters_mgmt/v1/clusters/c1/break_glass_credentials", `{}`)
	resp, err := http.Get(url + clusters + "/ok")
	must(t, err)
	resp.Body.Close()

	c := l.counts()
	want := []string{
		"cluster one created 2 times: cluster/ok, cluster/other",
		"nodepool/c1/np1: 201 x2",
	}
	if got := c.duplicateCreates(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("duplicateCreates = %q\nwant %q", got, want)
	}
	if n := c.posts("cluster"); n != 6 {
		t.Errorf("cluster create POSTs = %d, want 6", n)
	}
	if n := c.objects("cluster"); n != 3 {
		t.Errorf("clusters created = %d, want 3", n)
	}
	if n := c.adopted(); n != 1 {
		t.Errorf("409s adopted = %d, want 1", n)
	}
	if len(c.creds) != 2 || !c.creds["/api/clusters_mgmt/v1/clusters/c1/break_glass_credentials/b1"] {
		t.Errorf("credentials = %v, want two lower-cased hrefs", c.creds)
	}
	wantStatuses := map[int]int{200: 1, 201: 7, 409: 1, 429: 1, 500: 1, 503: 1}
	if fmt.Sprint(c.statuses) != fmt.Sprint(wantStatuses) {
		t.Errorf("statuses = %v, want %v", c.statuses, wantStatuses)
	}
}
