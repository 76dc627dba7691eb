package simulator

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBadInputGetsCSErrors checks that every refusal is a CS error body the
// SDK can parse: kind, id, href, code, reason and operation_id.
func TestBadInputGetsCSErrors(t *testing.T) {
	s := startSim(t)
	if r := s.do(t, "POST", clustersPath, fixture(t, "cluster.json")); r.status != 201 {
		t.Fatalf("setup POST cluster: status %d: %s", r.status, r.body)
	}
	withField := func(field, value string) string {
		return strings.Replace(fixture(t, "cluster.json"), field, value, 1)
	}
	np := clusterPath(testID) + "/node_pools"
	ea := clusterPath(testID) + "/external_auth_config/external_auths"
	cases := []struct {
		name, method, path, body string
		status                   int
		reason                   string
	}{
		{"malformed JSON", "POST", clustersPath, `{"id":`, 400, "not valid JSON"},
		{"JSON array", "POST", clustersPath, `[]`, 400, "not a JSON object"},
		{"empty body", "POST", clustersPath, ``, 400, "request body is empty"},
		{"wrongly typed field", "POST", clustersPath, `{"id": 5, "name": "x"}`, 400, "does not match the schema"},
		{"missing name", "POST", clustersPath, withField(`"name": "dev-cluster",`, ``), 400, "Attribute 'name' is required"},
		{"missing resource name", "POST", clustersPath, withField(`"resource_name": "dev-cluster",`, ``), 400,
			"Attribute 'azure.resource_name' is required"},
		{"invalid id", "POST", clustersPath, withField(testID, "Bad_ID"), 400, "identifier 'Bad_ID' is invalid"},
		{"existing id", "POST", clustersPath, fixture(t, "cluster.json"), 409,
			"Cluster with identifier '" + testID + "' already exists"},
		{"unknown cluster", "GET", clusterPath("nope"), "", 404, "Cluster 'nope' not found"},
		{"unknown cluster status", "GET", clusterPath("nope") + "/status", "", 404, "Cluster 'nope' not found"},
		{"unknown cluster checks", "GET", clusterPath("nope") + "/inflight_checks", "", 404, "not found"},
		{"patch unknown cluster", "PATCH", clusterPath("nope"), `{"kind":"Cluster"}`, 404, "not found"},
		{"delete unknown cluster", "DELETE", clusterPath("nope"), "", 404, "not found"},
		{"patch while validating", "PATCH", clusterPath(testID), `{"kind":"Cluster"}`, 400,
			"is in state 'validating', can't update"},
		{"patch malformed", "PATCH", clusterPath(testID), `{`, 400, "not valid JSON"},
		{"unknown node pool", "GET", np + "/np9", "", 404, "Node pool 'np9' not found"},
		{"unknown node pool status", "GET", np + "/np9/status", "", 404, "Node pool 'np9' not found"},
		{"node pool under unknown cluster", "POST", clusterPath("nope") + "/node_pools", fixture(t, "nodepool.json"), 404,
			"Cluster 'nope' not found"},
		{"node pool malformed", "POST", np, `{"id":"np1",}`, 400, "not valid JSON"},
		{"node pool bad id", "POST", np, `{"id":"NP_1","replicas":1}`, 400, "identifier 'NP_1' is invalid"},
		{"node pool negative replicas", "POST", np, `{"id":"np2","replicas":-1}`, 400, "'replicas' must not be negative"},
		{"unknown external auth", "GET", ea + "/x", "", 404, "External auth 'x' not found"},
		{"external auth without issuer", "POST", ea, `{"id":"entra"}`, 400, "'issuer.url' is required"},
		{"external auth http issuer", "POST", ea, `{"id":"entra","issuer":{"url":"http://x"}}`, 400, "must be an https URL"},
		{"unknown credential", "GET", credsPath(testID) + "/b1", "", 404, "Break glass credential 'b1' not found"},
		{"credential before ready", "POST", credsPath(testID), "", 400, "is in state 'validating'"},
		{"credential malformed", "POST", credsPath(testID), `{"kind":`, 400, "not valid JSON"},
		{"bad search", "GET", clustersPath + "?search=name+%3D+x", "", 400, "Search expression 'name = x' is invalid"},
		{"bad page", "GET", clustersPath + "?page=0", "", 400, "parameter 'page' must be a positive integer"},
		{"bad size", "GET", clustersPath + "?size=x", "", 400, "parameter 'size' must be a positive integer"},
		{"unknown path", "GET", "/api/aro_hcp/v1alpha1/nothing", "", 404, "Can't find resource"},
		{"wrong method", "PUT", clusterPath(testID), `{}`, 404, "method 'PUT'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, tc.method, tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tc.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			m := r.json(t)
			n := strconv.Itoa(tc.status)
			prefix := "/api/aro_hcp/v1alpha1/errors/"
			if strings.HasPrefix(tc.path, "/api/clusters_mgmt") {
				prefix = "/api/clusters_mgmt/v1/errors/"
			}
			want := map[string]string{"kind": "Error", "id": n, "code": "CLUSTERS-MGMT-" + n, "href": prefix + n}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("%s = %v, want %q", k, m[k], v)
				}
			}
			if reason, _ := m["reason"].(string); !strings.Contains(reason, tc.reason) {
				t.Errorf("reason = %q, want it to contain %q", reason, tc.reason)
			}
			if op, _ := m["operation_id"].(string); len(op) != 36 || r.header.Get("X-Operation-Id") != op {
				t.Errorf("operation_id = %q, header %q; want the same UUID", op, r.header.Get("X-Operation-Id"))
			}
		})
	}
}

// TestWireShapes checks the JSON shapes the reference documents: embedded
// statuses, node pool state.value, list envelopes and bodiless 204s.
func TestWireShapes(t *testing.T) {
	s := startSim(t)
	r := s.do(t, "POST", clustersPath, fixture(t, "cluster.json"))
	if r.status != 201 {
		t.Fatalf("POST cluster: %d %s", r.status, r.body)
	}
	c := r.json(t)
	for path, want := range map[string]any{
		"kind": "Cluster", "id": testID, "href": clusterPath(testID), "state": "validating",
		"status.state": "validating", "azure.resource_name": "dev-cluster", "region.id": "westus3",
		"version.channel_group": "stable",
	} {
		if got := get(c, path); got != want {
			t.Errorf("cluster %s = %v, want %v", path, got, want)
		}
	}

	s.clock.Advance(3 * time.Minute) // validating, pending, installing: 1m each
	st := s.do(t, "GET", clusterPath(testID)+"/status", "").json(t)
	if st["kind"] != "ClusterStatus" || st["state"] != "ready" || st["dns_ready"] != true {
		t.Errorf("status = %v, want kind ClusterStatus, state ready, dns_ready", st)
	}

	r = s.do(t, "POST", clusterPath(testID)+"/node_pools", fixture(t, "nodepool.json"))
	if r.status != 201 {
		t.Fatalf("POST node pool: %d %s", r.status, r.body)
	}
	nps := s.do(t, "GET", clusterPath(testID)+"/node_pools/np1/status", "").json(t)
	if get(nps, "state.value") != "validating" || get(nps, "state.last_updated_timestamp") == nil {
		t.Errorf("node pool status = %v, want state.value validating with a timestamp", nps)
	}

	r = s.do(t, "POST", clusterPath(testID)+"/external_auth_config/external_auths", fixture(t, "externalauth.json"))
	if r.status != 201 {
		t.Fatalf("POST external auth: %d %s", r.status, r.body)
	}
	eaObj := r.json(t)
	if get(eaObj, "status.state.value") != "ready" || get(eaObj, "issuer.url") != "https://login.microsoftonline.com/t/v2.0" {
		t.Errorf("external auth = %v, want embedded status.state.value ready and the issuer", eaObj)
	}

	checks := s.do(t, "GET", clusterPath(testID)+"/inflight_checks", "").json(t)
	items, _ := checks["items"].([]any)
	if checks["kind"] != "InflightCheckList" || checks["total"] != float64(1) || len(items) != 1 ||
		get(items[0].(map[string]any), "state") != "passed" {
		t.Errorf("inflight checks = %v, want one passed check in an envelope", checks)
	}

	list := s.do(t, "GET", clustersPath, "").json(t)
	if list["kind"] != "ClusterList" || list["page"] != float64(1) || list["size"] != float64(1) || list["total"] != float64(1) {
		t.Errorf("cluster list envelope = %v", list)
	}

	r = s.do(t, "DELETE", clusterPath(testID)+"/node_pools/np1", "")
	if r.status != 204 || r.header.Get("Content-Type") != "" || len(r.body) != 0 {
		t.Errorf("DELETE node pool = %d, Content-Type %q, body %q; want a bare 204", r.status, r.header.Get("Content-Type"), r.body)
	}
}

// TestSearchAndPaging exercises the "a = 'x' and b = 'y'" form over HTTP.
func TestSearchAndPaging(t *testing.T) {
	s := startSim(t)
	for i, rg := range []string{"rg-a", "rg-b", "rg-a"} {
		body := strings.NewReplacer(testID, "c"+strconv.Itoa(i), `"rg-dev"`, `"`+rg+`"`,
			`"resource_name": "dev-cluster"`, `"resource_name": "name`+strconv.Itoa(i)+`"`).
			Replace(fixture(t, "cluster.json"))
		if r := s.do(t, "POST", clustersPath, body); r.status != 201 {
			t.Fatalf("POST %d: %d %s", i, r.status, r.body)
		}
	}
	cases := []struct {
		query   string
		wantIDs []string
		total   float64
	}{
		{"", []string{"c0", "c1", "c2"}, 3},
		{"search=" + urlq("azure.resource_group_name = 'rg-a'"), []string{"c0", "c2"}, 2},
		{"search=" + urlq("azure.resource_group_name = 'RG-A' and azure.resource_name = 'name2'"), []string{"c2"}, 1},
		{"search=" + urlq("azure.subscription_id = '11111111-2222-3333-4444-555555555555' AND name = 'dev-cluster'"),
			[]string{"c0", "c1", "c2"}, 3},
		{"search=" + urlq("azure.resource_group_name = 'nope'"), nil, 0},
		{"size=2&page=2", []string{"c2"}, 3},
		{"size=2&page=3", nil, 3},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			r := s.do(t, "GET", clustersPath+"?"+tc.query, "")
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			m := r.json(t)
			var ids []string
			items, _ := m["items"].([]any)
			for _, it := range items {
				ids = append(ids, it.(map[string]any)["id"].(string))
			}
			if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") || m["total"] != tc.total {
				t.Errorf("ids = %v total %v, want %v total %v", ids, m["total"], tc.wantIDs, tc.total)
			}
		})
	}
}

func urlq(s string) string {
	return strings.NewReplacer(" ", "+", "=", "%3D", "'", "%27").Replace(s)
}
