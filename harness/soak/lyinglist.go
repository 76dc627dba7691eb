package soak

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// listLiar stands in front of Clusters Service and makes one in every so
// many id searches (the tick's batched reads of clusters and node pools)
// lie: every object listed twice, the second copy failed. A reader that
// took the copy would fail healthy operations, which the outcome checks
// then catch; a reader that holds a list to its contract reads those
// objects with their own GETs.
type listLiar struct {
	next  http.Handler
	every int // 0: never

	mu             sync.Mutex
	searches, lied int
}

func newListLiar(next http.Handler, every int) *listLiar { return &listLiar{next: next, every: every} }

func (l *listLiar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if l.every <= 0 || !isIDSearch(r) {
		l.next.ServeHTTP(w, r)
		return
	}
	l.mu.Lock()
	l.searches++
	lie := l.searches%l.every == 0
	l.mu.Unlock()
	if !lie {
		l.next.ServeHTTP(w, r)
		return
	}
	rec := &recorder{header: http.Header{}}
	l.next.ServeHTTP(rec, r)
	body, lied := doubleFailed(rec.status, rec.body.Bytes())
	if lied {
		l.mu.Lock()
		l.lied++
		l.mu.Unlock()
	}
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	if rec.status == 0 {
		return // CS wrote nothing: the client gave up
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// isIDSearch reports whether r lists clusters or node pools by id.
func isIDSearch(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Path != cs.ClustersPath && !strings.HasSuffix(r.URL.Path, "/node_pools") {
		return false
	}
	s := strings.TrimSpace(r.URL.Query().Get("search"))
	return strings.HasPrefix(s, "id =") || strings.HasPrefix(s, "id in")
}

// doubleFailed lists every item of a list page twice, the copy in state
// error; false when the page has no items to lie about.
func doubleFailed(status int, body []byte) ([]byte, bool) {
	var page map[string]json.RawMessage
	var items []map[string]any
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil || json.Unmarshal(page["items"], &items) != nil || len(items) == 0 {
		return body, false
	}
	for _, it := range append([]map[string]any(nil), items...) {
		b, _ := json.Marshal(it)
		var dup map[string]any
		if json.Unmarshal(b, &dup) != nil {
			return body, false
		}
		if _, ok := dup["state"]; ok { // a cluster
			dup["state"] = "error"
		}
		if st, ok := dup["status"].(map[string]any); ok {
			if v, ok := st["state"].(map[string]any); ok { // a node pool
				v["value"] = "error"
			} else {
				st["state"], st["provision_error_code"], st["provision_error_message"] = "error", "OCM3055", "listed twice by the soak's lying list"
			}
		}
		items = append(items, dup)
	}
	page["items"], _ = json.Marshal(items)
	page["size"], _ = json.Marshal(len(items))
	out, err := json.Marshal(page)
	if err != nil {
		return body, false
	}
	return out, true
}

// counts returns the id searches seen and those answered with a lie.
func (l *listLiar) counts() (searches, lied int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.searches, l.lied
}
