package soak

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// sickness is how a sick Clusters Service object misbehaves, for the whole
// run: every request about it hangs; or CS creates it and then hangs on
// every later request (the case a tick meets: a known object that stops
// answering); or every request is answered 200 with garbage.
type sickness string

const (
	sickHang        sickness = "hang"
	sickHangCreated sickness = "hang-after-create"
	sickGarbage     sickness = "garbage"
)

// sickSet names the sick subset: clusters by ARM name, node pools by their
// CS ID (the lower-cased ARM name, unique in a run), lower-cased.
type sickSet struct {
	clusters, pools map[string]sickness
}

func (s sickSet) size() int { return len(s.clusters) + len(s.pools) }

// sickCS stands in front of Clusters Service for the sick subset. It knows
// the sick clusters by their ARM name, learns their CS IDs from the create
// POSTs and from then on treats every request under the cluster's href the
// same way; a sick node pool, every request under its href and its create. A hung request never reaches CS; a garbled one does (so a create
// really happens) and its answer is thrown away, as a broken proxy or a CS
// bug would. A search for one sick cluster by its ARM name (the create's
// adoption check) is a request about it; any other cluster list leaves the
// sick clusters out (a reader that batches its polls then asks for them
// one by one) and serves the others: one sick object must not hang a page
// of healthy ones.
type sickCS struct {
	next  http.Handler
	names map[string]sickness // lower-case ARM cluster names
	pools map[string]sickness // lower-case node pool IDs
	done  <-chan struct{}     // closed at the end of the run: hung requests return

	mu     sync.Mutex
	ids    map[string]sickness // CS cluster IDs, learned from create POSTs
	counts map[sickness]int    // requests hung or garbled
}

func newSickCS(next http.Handler, set sickSet, done <-chan struct{}) *sickCS {
	lower := func(m map[string]sickness) map[string]sickness {
		out := make(map[string]sickness, len(m))
		for n, s := range m {
			out[strings.ToLower(n)] = s
		}
		return out
	}
	return &sickCS{next: next, names: lower(set.clusters), pools: lower(set.pools), done: done, ids: map[string]sickness{},
		counts: map[sickness]int{}}
}

func (s *sickCS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == cs.ClustersPath {
		if sick, ok := s.names[searchedName(r.URL.Query().Get("search"))]; ok && sick != sickHangCreated {
			s.misbehave(w, r, sick)
			return
		}
		s.list(w, r, s.ids)
		return
	}
	sick, create, ok := s.classify(r)
	if !ok && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/node_pools") {
		s.list(w, r, s.pools)
		return
	}
	if !ok || sick == sickHangCreated && create {
		s.next.ServeHTTP(w, r)
		return
	}
	s.misbehave(w, r, sick)
}

// misbehave answers a request about a sick cluster the way it is sick.
func (s *sickCS) misbehave(w http.ResponseWriter, r *http.Request, sick sickness) {
	s.mu.Lock()
	s.counts[sick]++
	s.mu.Unlock()
	if sick != sickGarbage {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	rec := &recorder{header: http.Header{}}
	s.next.ServeHTTP(rec, r)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(garble(rec.body.Bytes(), s.count(sickGarbage)))
}

// list serves a list without the items whose ID is in sick.
func (s *sickCS) list(w http.ResponseWriter, r *http.Request, sick map[string]sickness) {
	rec := &recorder{header: http.Header{}}
	s.next.ServeHTTP(rec, r)
	if rec.status == 0 {
		return // CS wrote nothing: the client gave up
	}
	body := rec.body.Bytes()
	var page map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if rec.status == http.StatusOK && json.Unmarshal(body, &page) == nil && json.Unmarshal(page["items"], &items) == nil {
		kept := items[:0]
		for _, it := range items {
			var id string
			_ = json.Unmarshal(it["id"], &id)
			s.mu.Lock()
			_, isSick := sick[strings.ToLower(id)]
			s.mu.Unlock()
			if !isSick {
				kept = append(kept, it)
			}
		}
		if dropped := len(items) - len(kept); dropped > 0 {
			page["items"], _ = json.Marshal(kept)
			for _, field := range []string{"size", "total"} {
				var n int
				if json.Unmarshal(page[field], &n) == nil {
					page[field], _ = json.Marshal(n - dropped)
				}
			}
			body, _ = json.Marshal(page)
		}
	}
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// searchedName is the ARM name a CS search asks for, lower-cased; "" when
// it asks for none.
func searchedName(search string) string {
	const key = "azure.resource_name = '"
	_, rest, ok := strings.Cut(strings.ToLower(search), key)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "'")
	return name
}

// classify says whether r is about a sick cluster and creates it,
// learning the cluster's CS ID when it does.
func (s *sickCS) classify(r *http.Request) (sick sickness, create, ok bool) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		return "", false, false
	}
	if r.Method == http.MethodPost && r.URL.Path == cs.ClustersPath {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return "", false, false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct{ ID, Name string }
		_ = json.Unmarshal(body, &in)
		sick, ok := s.names[strings.ToLower(in.Name)]
		if ok && in.ID != "" {
			s.mu.Lock()
			s.ids[strings.ToLower(in.ID)] = sick
			s.mu.Unlock()
		}
		return sick, true, ok
	}
	for _, prefix := range []string{cs.ClustersPath + "/", cs.ClustersMgmtPrefix + "/clusters/"} {
		if rest, ok := strings.CutPrefix(r.URL.Path, prefix); ok {
			id, under, _ := strings.Cut(rest, "/")
			s.mu.Lock()
			sick, ok := s.ids[strings.ToLower(id)]
			s.mu.Unlock()
			if ok {
				return sick, false, true
			}
			return s.classifyPool(r, under)
		}
	}
	return "", false, false
}

// classifyPool says whether a request under a healthy cluster's href
// (under, e.g. "node_pools/np1/status") is about a sick node pool.
func (s *sickCS) classifyPool(r *http.Request, under string) (sick sickness, create, ok bool) {
	rest, isPool := strings.CutPrefix(under, "node_pools")
	switch {
	case !isPool:
		return "", false, false
	case rest == "" && r.Method == http.MethodPost:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return "", false, false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct{ ID string }
		_ = json.Unmarshal(body, &in)
		sick, ok := s.pools[strings.ToLower(in.ID)]
		return sick, true, ok
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	sick, ok = s.pools[strings.ToLower(id)]
	return sick, false, ok && id != ""
}

func (s *sickCS) count(k sickness) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[k]
}

// sickCounts returns the requests hung and garbled so far.
func (s *sickCS) sickCounts() (hung, garbled int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[sickHang] + s.counts[sickHangCreated], s.counts[sickGarbage]
}

// garble turns an answer into one of the kinds of garbage a client meets:
// a truncated body, an HTML error page with a 200, or JSON of another shape.
func garble(real []byte, n int) []byte {
	switch n % 3 {
	case 0:
		return real[:len(real)/2]
	case 1:
		return []byte("<html><body><h1>502 Bad Gateway</h1></body></html>")
	}
	return []byte(`{"kind":"Cluster","id":42,"status":{"state":["ready"]}}`)
}

// recorder keeps an answer in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
