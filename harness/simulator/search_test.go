package simulator

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseSearch(t *testing.T) {
	eq := func(f, v string) term { return term{field: f, values: []string{v}} }
	cases := []struct {
		expr    string
		want    [][]term
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"azure.resource_name = 'x'", [][]term{{eq("azure.resource_name", "x")}}, ""},
		{"name='a b' and id = 'c'", [][]term{{eq("name", "a b"), eq("id", "c")}}, ""},
		{"name = 'o''brien' AND azure.tenant_id = ''", [][]term{{eq("name", "o'brien"), eq("azure.tenant_id", "")}}, ""},
		{"id = 'a' or id = 'b' OR id='c'", [][]term{{eq("id", "a")}, {eq("id", "b")}, {eq("id", "c")}}, ""},
		{"name = 'n' and id = 'a' or id = 'b'", [][]term{{eq("name", "n"), eq("id", "a")}, {eq("id", "b")}}, ""},
		{"id in ('a', 'b','c')", [][]term{{{field: "id", values: []string{"a", "b", "c"}}}}, ""},
		{"name = 'n' and (id = 'a' or id = 'b')", [][]term{{eq("name", "n"), eq("id", "a")}, {eq("name", "n"), eq("id", "b")}}, ""},
		{"((id = 'a'))", [][]term{{eq("id", "a")}}, ""},
		{"state = 'ready'", nil, `unsupported search field "state"`},
		{"name 'x'", nil, "expected '=' or 'in'"},
		{"name = x", nil, "single-quoted"},
		{"name = 'x", nil, "unterminated"},
		{"name = 'x' xor id = 'y'", nil, "expected 'and' or 'or'"},
		{"= 'x'", nil, "expected a field name"},
		{"id in 'a'", nil, "expected '('"},
		{"id in ('a' 'b')", nil, "expected ',' or ')'"},
		{"(id = 'a'", nil, "expected ')'"},
		{"id = 'a' or", nil, "expected a field name"},
		{"id = 'a' order by name", nil, "expected 'and' or 'or'"},
	}
	for _, tc := range cases {
		got, err := parseSearch(tc.expr, clusterFields)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseSearch(%q) error = %v, want %q", tc.expr, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got.alts, tc.want) {
			t.Errorf("parseSearch(%q) = %v, %v; want %v", tc.expr, got.alts, err, tc.want)
		}
	}
}

// TestSearchExpansionIsBounded: a product of parenthesised alternatives
// is refused before it is multiplied out.
func TestSearchExpansionIsBounded(t *testing.T) {
	group := "(" + strings.Repeat("id = 'a' or ", 199) + "id = 'a')"
	_, err := parseSearch(group+" and "+group, clusterFields)
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("200x200 alternatives: err = %v, want a refusal", err)
	}
}

func TestSearchIDs(t *testing.T) {
	cases := []struct {
		expr  string
		ids   []string
		bound bool
	}{
		{"", nil, false},
		{"id = 'A' or id = 'b' or id = 'a'", []string{"a", "b"}, true},
		{"id in ('a','b') and name = 'x'", []string{"a", "b"}, true},
		{"id = 'a' or name = 'x'", []string{"a"}, false},
		{"name = 'x'", nil, false},
	}
	for _, tc := range cases {
		q, err := parseSearch(tc.expr, clusterFields)
		if err != nil {
			t.Fatalf("parseSearch(%q): %v", tc.expr, err)
		}
		if ids, bound := q.ids(); !reflect.DeepEqual(ids, tc.ids) || bound != tc.bound {
			t.Errorf("ids(%q) = %v, %v; want %v, %v", tc.expr, ids, bound, tc.ids, tc.bound)
		}
	}
}

// TestBatchedSearchOverHTTP is what batched polling sends: id terms
// joined by or (or one in), paged by size, with the ledger counting the
// list calls and the ids each named.
func TestBatchedSearchOverHTTP(t *testing.T) {
	s := startSim(t)
	for i := range 5 {
		body := strings.NewReplacer(testID, fmt.Sprintf("c%d", i), `"resource_name": "dev-cluster"`,
			`"resource_name": "name`+strconv.Itoa(i)+`"`).Replace(fixture(t, "cluster.json"))
		if r := s.do(t, "POST", clustersPath, body); r.status != 201 {
			t.Fatalf("POST %d: %d %s", i, r.status, r.body)
		}
	}
	s.ResetLedger()
	cases := []struct {
		query   string
		wantIDs []string
		total   float64
	}{
		{"search=" + urlq("id = 'c3' or id = 'c0' or id = 'gone'"), []string{"c0", "c3"}, 2},
		{"search=" + urlq("id in ('c4', 'c1', 'C2')"), []string{"c1", "c2", "c4"}, 3},
		{"size=2&search=" + urlq("id in ('c4', 'c1', 'c2')"), []string{"c1", "c2"}, 3},
		{"size=2&page=2&search=" + urlq("id in ('c4', 'c1', 'c2')"), []string{"c4"}, 3},
		{"search=" + urlq("name = 'dev-cluster' and (id = 'c1' or id = 'c2')"), []string{"c1", "c2"}, 2},
		{"search=" + urlq("azure.resource_name = 'name4' or id = 'c0'"), []string{"c0", "c4"}, 2},
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
				item := it.(map[string]any)
				ids = append(ids, item["id"].(string))
				if st, _ := get(item, "status.state").(string); st == "" {
					t.Errorf("item %s has no status.state inline", item["id"])
				}
			}
			if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") || m["total"] != tc.total {
				t.Errorf("ids = %v total %v, want %v total %v", ids, m["total"], tc.wantIDs, tc.total)
			}
		})
	}
	got := s.Ledger().Lists["GET "+clustersPath]
	if want := (ListCalls{Calls: 6, IDs: 3 + 3 + 3 + 3 + 2 + 1, MaxIDs: 3}); got != want {
		t.Errorf("ledger lists = %+v, want %+v", got, want)
	}
	if r := s.do(t, "GET", clustersPath+"?search="+urlq("id = 'a' or"), ""); r.status != 400 ||
		!strings.Contains(string(r.body), "expected a field name") {
		t.Errorf("bad search = %d %s, want a 400 naming the fault", r.status, r.body)
	}
}

// TestChildListsPerCluster: node pools list per cluster (with an id
// search), external auths per cluster (no search), both paged.
func TestChildListsPerCluster(t *testing.T) {
	s := startSim(t)
	if r := s.do(t, "POST", clustersPath, fixture(t, "cluster.json")); r.status != 201 {
		t.Fatalf("POST cluster: %d %s", r.status, r.body)
	}
	s.clock.Advance(3 * 60e9) // validating, pending, installing: a minute each
	for _, np := range []string{"np1", "np2", "np3"} {
		body := strings.Replace(fixture(t, "nodepool.json"), `"id": "np1"`, `"id": "`+np+`"`, 1)
		if r := s.do(t, "POST", clusterPath(testID)+"/node_pools", body); r.status != 201 {
			t.Fatalf("POST %s: %d %s", np, r.status, r.body)
		}
	}
	if r := s.do(t, "POST", clusterPath(testID)+"/external_auth_config/external_auths", fixture(t, "externalauth.json")); r.status != 201 {
		t.Fatalf("POST external auth: %d %s", r.status, r.body)
	}
	s.ResetLedger()
	cases := []struct {
		path    string
		wantIDs string
		total   float64
	}{
		{"/node_pools", "np1,np2,np3", 3},
		{"/node_pools?size=2&page=2", "np3", 3},
		{"/node_pools?search=" + urlq("id = 'np3' or id = 'np1'"), "np1,np3", 2},
		{"/external_auth_config/external_auths?size=1", "entra", 1},
	}
	for _, tc := range cases {
		r := s.do(t, "GET", clusterPath(testID)+tc.path, "")
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", tc.path, r.status, r.body)
		}
		m := r.json(t)
		var ids []string
		items, _ := m["items"].([]any)
		for _, it := range items {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if strings.Join(ids, ",") != tc.wantIDs || m["total"] != tc.total {
			t.Errorf("GET %s: ids %v total %v, want %s total %v", tc.path, ids, m["total"], tc.wantIDs, tc.total)
		}
	}
	if r := s.do(t, "GET", clusterPath("nosuchcluster")+"/node_pools", ""); r.status != 404 {
		t.Errorf("node pools of a missing cluster = %d, want 404", r.status)
	}
	l := s.Ledger().Lists
	if np := l["GET "+clustersPath+"/{id}/node_pools"]; np != (ListCalls{Calls: 4, IDs: 2, MaxIDs: 2}) {
		t.Errorf("node pool lists = %+v, want 4 calls naming 2 ids", np)
	}
	if ea := l["GET "+clustersPath+"/{id}/external_auth_config/external_auths"]; ea.Calls != 1 {
		t.Errorf("external auth lists = %+v, want 1 call", ea)
	}
}
