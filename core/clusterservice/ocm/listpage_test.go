package ocm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// simulatorPage creates clusters in the simulator in every shape a poll
// meets (provisioning, ready, updated, failed, deleting) and returns its
// list page of them as sent, with their ids.
func simulatorPage(t testing.TB, n int) ([]byte, []string) {
	t.Helper()
	e := newEnv(t, defaultConfig())
	var hrefs, ids []string
	for i := range n {
		c, err := e.client.PostCluster(e.ctx, clusterSpec(i))
		if err != nil {
			t.Fatal(err)
		}
		hrefs, ids = append(hrefs, c.Href), append(ids, c.ID)
	}
	e.clock.Advance(3 * time.Minute)
	if n > 2 {
		drain := 90
		if _, err := e.client.PatchCluster(e.ctx, hrefs[1], cs.ClusterPatch{NodeDrainGracePeriodMinutes: &drain,
			AuthorizedCIDRs: []string{"10.0.0.0/16", "192.168.1.1/32"}}); err != nil {
			t.Fatal(err)
		}
		if err := e.client.DeleteCluster(e.ctx, hrefs[2]); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get(e.url + cs.ClustersPath + "?size=" + fmt.Sprint(n))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing the simulator's clusters: %s, %v", resp.Status, err)
	}
	return body, ids
}

// sameAsSDK fails t unless the wire reader, when it reads body, reads it
// as the SDK's reader does; it says whether the wire reader read it. The
// SDK's reader also refuses a page over a member the poll never reads (a
// timestamp it cannot parse, a flag sent as a string), which the wire
// reader skips: such a page must read, by the SDK's reader too, the same
// once cut down to the members the poll reads (used).
func sameAsSDK[T any](t *testing.T, body []byte, r pageReaders[T], u used) bool {
	t.Helper()
	got, ok := wirePage(body, r.wire)
	if !ok {
		return false
	}
	want, err := sdkPage(body, r.sdk)
	if err != nil && utf8.Valid(body) {
		var doc any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if derr := dec.Decode(&doc); derr != nil {
			t.Fatalf("the wire reader read a page that is no JSON (%v):\n%s", derr, body)
		}
		cut, merr := json.Marshal(u.cut(doc))
		if merr != nil {
			t.Fatal(merr)
		}
		if want, err = sdkPage(cut, r.sdk); err != nil {
			t.Fatalf("the wire reader read a page the SDK refuses (%v), even cut down to what the poll reads:\n%s\n%s", err, body, cut)
		}
	}
	if err != nil {
		t.Fatalf("the wire reader read a page the SDK refuses (%v):\n%s", err, body)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the wire reader read\n%+v\nthe SDK\n%+v\nof\n%s", got, want, body)
	}
	return true
}

// used names the members a wire reader reads, each with the members it
// reads inside (nil: all of it).
type used map[string]used

// cut keeps of v only what u names; an array's elements are cut alike.
func (u used) cut(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if u == nil {
			return v
		}
		out := map[string]any{}
		for k, inner := range u {
			if e, ok := v[k]; ok {
				out[k] = inner.cut(e)
			}
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = u.cut(e)
		}
		return v
	}
	return v
}

var versionUsed = used{"id": nil, "raw_id": nil, "channel_group": nil}

func pageUsed(item used) used {
	return used{"kind": nil, "page": nil, "size": nil, "total": nil, "items": item}
}

var clusterPageUsed = pageUsed(used{"kind": nil, "id": nil, "href": nil, "name": nil, "state": nil,
	"region": {"id": nil},
	"azure": {"subscription_id": nil, "resource_group_name": nil, "resource_name": nil, "tenant_id": nil,
		"managed_resource_group_name": nil},
	"status":                  {"kind": nil, "state": nil, "description": nil, "provision_error_code": nil, "provision_error_message": nil},
	"node_drain_grace_period": {"value": nil, "unit": nil},
	"api":                     {"cidr_block_access": {"allow": {"mode": nil, "values": nil}}},
	"version":                 versionUsed,
})

func TestWireReadsTheSimulatorsPages(t *testing.T) {
	body, ids := simulatorPage(t, 5)
	if !sameAsSDK(t, body, clusterReaders, clusterPageUsed) {
		t.Fatalf("the wire reader gave up on the simulator's page:\n%s", body)
	}
	p, _ := wirePage(body, wireCluster)
	if len(p.items) != len(ids) || !p.hasSize || p.size != len(ids) || !p.hasTotal {
		t.Fatalf("page: %d items, size %d (%v), total %d (%v); want %d", len(p.items), p.size, p.hasSize, p.total, p.hasTotal, len(ids))
	}
	patched := p.items[1].c
	if patched.NodeDrainGracePeriodMinutes != 90 || len(patched.AuthorizedCIDRs) != 2 || patched.Version == "" || !p.items[1].inline {
		t.Fatalf("the patched cluster read as %+v", p.items[1])
	}
}

// TestWireReadsOrGivesUp holds the wire reader to the SDK's reading of
// the pages it reads, and to giving up on what it does not understand.
func TestWireReadsOrGivesUp(t *testing.T) {
	item := func(members string) string {
		return `{"kind":"ClusterList","page":1,"size":1,"total":1,"items":[{"kind":"Cluster","id":"a1","href":"/api/aro_hcp/v1alpha1/clusters/a1"` + members + `}]}`
	}
	for _, tc := range []struct {
		name, body string
		reads      bool
	}{
		{"plain", item(`,"status":{"kind":"ClusterStatus","state":"ready"}`), true},
		{"no status", item(``), true},
		{"status link", item(`,"status":{"kind":"ClusterStatusLink","href":"/x","state":"ready"}`), true},
		{"status of another kind", item(`,"status":{"kind":"Other","state":"ready"}`), true},
		{"top-level state only", item(`,"state":"installing","status":{"kind":"ClusterStatus"}`), true},
		{"failed", item(`,"status":{"state":"error","provision_error_code":"OCM3001","provision_error_message":"no quota","description":"d"}`), true},
		{"drain in hours", item(`,"node_drain_grace_period":{"value":1.5,"unit":"hours"}`), true},
		{"drain in minutes", item(`,"node_drain_grace_period":{"value":30,"unit":"minutes"}`), true},
		{"allow list", item(`,"api":{"url":"u","cidr_block_access":{"allow":{"mode":"allow_list","values":["10.0.0.0/8"]}}}`), true},
		{"empty allow list", item(`,"api":{"cidr_block_access":{"allow":{"mode":"allow_list","values":[]}}}`), true},
		{"allow all", item(`,"api":{"cidr_block_access":{"allow":{"mode":"allow_all","values":["x"]}}}`), true},
		{"version", item(`,"version":{"kind":"Version","id":"openshift-v4.19.2","raw_id":"4.19.2","channel_group":"stable"}`), true},
		{"empty version", item(`,"version":{}`), true},
		{"unknown members of every type", item(`,"x":{"a":[1,-2.5e3,true,false,null,"s\"\u00e9"],"b":{}},"y":[]`), true},
		{"no href", `{"items":[{"id":"a1","status":{"state":"ready"}}]}`, true},
		{"no items", `{"kind":"ClusterList","page":1,"size":0,"total":0}`, true},
		{"empty items", `{"kind":"ClusterList","page":1,"size":0,"total":0,"items":[]}`, true},
		{"white space", " {\n\t\"size\" : 0 ,\r\n\"items\" : [ ] } \n", true},
		{"utf-8", item(`,"name":"clüster"`), true},
		{"every escape in a member skipped", item(`,"x":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00 end"`), true},
		{"an escape at a skipped string's end", item(`,"x":"a\\"`), true},
		{"a member the poll skips that the SDK refuses", item(`,"creation_timestamp":"yesterday","status":{"state":"ready","dns_ready":"yes"}`), true},

		{"an escape in a member read", item(`,"name":"a\"b"`), false},
		{"a control character in a member read", item(",\"name\":\"a\x01b\""), false},
		{"a raw tab in a member read", item(",\"name\":\"a\tb\""), false},
		{"an escape in a member name", item(`,"na\u006de":"x"`), false},
		{"a string cut short", `{"items":[{"kind":"Cluster","id":"a1`, false},
		{"a bad escape in a member skipped", item(`,"x":"a\xb"`), false},
		{"a short unicode escape in a member skipped", item(`,"x":"\u00e"`), false},
		{"a bad unicode escape in a member skipped", item(`,"x":"\u00g9"`), false},
		{"a control character in a member skipped", item(",\"x\":\"a\x1fb\""), false},
		{"a skipped string cut short at its escape", `{"items":[],"x":"a\`, false},
		{"null status", item(`,"status":null`), false},
		{"null name", item(`,"name":null`), false},
		{"a number for a name", item(`,"name":5`), false},
		{"a duplicate member", item(`,"status":{"state":"ready"},"status":{"state":"error"}`), false},
		{"a duplicate envelope member", `{"size":1,"size":0,"items":[]}`, false},
		{"a cluster link", `{"items":[{"kind":"ClusterLink","id":"a1"}]}`, false},
		{"negative size", `{"size":-1,"items":[]}`, false},
		{"a fractional total", `{"total":1.0,"items":[]}`, false},
		{"a huge page number", `{"page":12345678901,"items":[]}`, false},
		{"a drain in exponent form", item(`,"node_drain_grace_period":{"value":1e2}`), false},
		{"trailing bytes", `{"items":[]} x`, false},
		{"a trailing comma", `{"items":[],}`, false},
		{"items not an array", `{"items":{}}`, false},
		{"not an object", `[]`, false},
		{"HTML", `<html>bad gateway</html>`, false},
		{"too deep", `{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `,"items":[]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameAsSDK(t, []byte(tc.body), clusterReaders, clusterPageUsed); got != tc.reads {
				t.Fatalf("the wire reader read the page: %v; want %v", got, tc.reads)
			}
		})
	}
}

// TestReadClusterPageAnswers holds the page reader's errors to csError's
// reading of the SDK's: CS's error body is CS's word, an empty one no
// evidence, and a body neither reader understands an error.
func TestReadClusterPageAnswers(t *testing.T) {
	_, err := readClusterPage(http.StatusNotFound, []byte(`{"kind":"Error","id":"404","href":"/x","code":"CLUSTERS-MGMT-404","reason":"gone"}`))
	var ce *cs.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotFound || ce.Code != "CLUSTERS-MGMT-404" {
		t.Fatalf("CS's 404: %v; want a *cs.Error with its code", err)
	}
	var ua *cs.UnrecognizedAnswer
	if _, err := readClusterPage(http.StatusBadGateway, nil); !errors.As(err, &ua) {
		t.Fatalf("an empty 502: %v; want an unrecognized answer", err)
	}
	if _, err := readClusterPage(http.StatusBadGateway, []byte(`<html>bad gateway</html>`)); err == nil || errors.As(err, &ce) {
		t.Fatalf("a gateway's 502 page: %v; want an error that is not CS's", err)
	}
	if _, err := readClusterPage(http.StatusOK, []byte(`<html>ok</html>`)); err == nil {
		t.Fatal("a 200 with an HTML body read as a page")
	}
	for _, body := range []string{``, `{}`, `{"items":[{"kind":"Cluster","id":"a","status":{"state":"ready"}}]}`,
		`{"kind":"ClusterList","size":1,"total":1,"items":[{"kind":"Cluster","id":"a","status":{"state":"ready"}}]}`} {
		if p, err := readClusterPage(http.StatusOK, []byte(body)); !errors.Is(err, cs.ErrInconsistentList) || !errors.As(err, &ua) || len(p.items) != 0 {
			t.Fatalf("a 200 of %q: %+v, %v; want no list: it is not OCM's list shape", body, p, err)
		}
	}
}

// FuzzClusterPage: whatever page the wire reader reads, the SDK reads the
// same.
func FuzzClusterPage(f *testing.F) {
	body, _ := simulatorPage(f, 4)
	f.Add(body)
	f.Add([]byte(`{"items":[{"id":"a","status":{"kind":"ClusterStatusLink","state":"ready"},"node_drain_grace_period":{"value":2,"unit":"hour"}}]}`))
	f.Add([]byte(`{"size":1,"total":1,"items":[{"api":{"cidr_block_access":{"allow":{"mode":"allow_list","values":["a"]}}},"x":[1.5,"\u0041",{}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsSDK(t, body, clusterReaders, clusterPageUsed)
	})
}

// BenchmarkClusterPage reads the simulator's page of 100 clusters with
// the SDK's reader and with the wire reader.
func BenchmarkClusterPage(b *testing.B) {
	body, _ := simulatorPage(b, 100)
	b.Run("sdk", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if p, err := sdkPage(body, sdkClusters); err != nil || len(p.items) != 100 {
				b.Fatal(len(p.items), err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if p, ok := wirePage(body, wireCluster); !ok || len(p.items) != 100 {
				b.Fatal(len(p.items), ok)
			}
		}
	})
}

// TestPageQueryIsTheSDKs: a page's query is what url.Values encodes for
// the SDK's List().Search().Size().Page(), whatever the search holds.
func TestPageQueryIsTheSDKs(t *testing.T) {
	for _, tc := range []struct {
		search     string
		size, page int
	}{
		{"id = 'a1'", 1, 1},
		{"id in ('2abc', '3def')", 100, 2},
		{"id = 'o''brien' or id = '&x=1+2 %/?#'", 500, 10},
		{"", 0, 0},
	} {
		want := url.Values{"page": {strconv.Itoa(tc.page)}, "search": {tc.search}, "size": {strconv.Itoa(tc.size)}}.Encode()
		if got := pageQuery(tc.search, tc.size, tc.page); got != want {
			t.Errorf("pageQuery(%q, %d, %d) = %q, want %q", tc.search, tc.size, tc.page, got, want)
		}
	}
}

// TestPageRoomDoesNotTrustContentLength: a list page's body is read into
// room sized from its Content-Length, which a proxy may get wrong. One
// claiming 4 GiB costs the read no more than the cap (a few hundred kB
// for a page of 100), and the page cut short is an error, not a list.
func TestPageRoomDoesNotTrustContentLength(t *testing.T) {
	const claimed = 4 << 30
	body := `{"kind":"ClusterList","page":1,"size":0,"total":0,"items":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(claimed))
		fmt.Fprint(w, body) // far short of what it claims: the server then cuts the connection
	}))
	defer srv.Close()
	c := connect(t, Config{URL: srv.URL})
	hrefs := make([]string, 100)
	for i := range hrefs {
		hrefs[i] = cs.ClusterHref(clusterID(i))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := c.ListClustersByHref(context.Background(), hrefs)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Errorf("a page cut short of its Content-Length = %d clusters, no error", len(got))
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("reading a page that claims %d bytes allocated %d", claimed, grew)
	}
}
