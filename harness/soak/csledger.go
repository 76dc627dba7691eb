package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Create routes of Clusters Service, with the cluster ID captured.
var (
	clusterCreate      = regexp.MustCompile(`^` + regexp.QuoteMeta(cs.ClustersPath) + `$`)
	nodePoolCreate     = regexp.MustCompile(`^` + regexp.QuoteMeta(cs.ClustersPath) + `/([^/]+)/node_pools$`)
	externalAuthCreate = regexp.MustCompile(`^` + regexp.QuoteMeta(cs.ClustersPath) + `/([^/]+)/external_auth_config/external_auths$`)
	credentialCreate   = regexp.MustCompile(`^` + regexp.QuoteMeta(cs.ClustersMgmtPrefix) + `/clusters/([^/]+)/break_glass_credentials$`)
)

// The simulator's ledger keys of the same routes ("METHOD pattern" minus
// the method).
const (
	simClusterCreate      = cs.ClustersPath
	simNodePoolCreate     = cs.ClustersPath + "/{id}/node_pools"
	simExternalAuthCreate = cs.ClustersPath + "/{id}/external_auth_config/external_auths"
)

// csLedger wraps the simulator and records every create POST by the
// object it creates, with CS's answer, plus the status of every answer.
// The simulator's own ledger counts requests by path; a cluster POST has
// no ID in its path, so a per-object count needs the body.
type csLedger struct {
	next http.Handler

	mu       sync.Mutex
	creates  map[string]map[int]int // object ("cluster/ID", "nodepool/CID/ID" ...) -> status -> POSTs
	statuses map[int]int            // every answer by status; 0: none (hung, or the client gave up)
	creds    map[string]bool        // hrefs of the credentials CS issued
	// named maps a cluster's ARM name to the CS IDs created for it: the
	// lifecycle picks a cluster's ID itself, so a second create would
	// have an ID of its own.
	named map[string]map[string]bool
}

func newCSLedger(next http.Handler) *csLedger {
	return &csLedger{next: next, creates: map[string]map[int]int{}, statuses: map[int]int{}, creds: map[string]bool{},
		named: map[string]map[string]bool{}}
}

// statusWriter remembers the status and the body of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	keep   bool
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.keep {
		w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (l *csLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		l.next.ServeHTTP(w, r)
		return
	}
	object, credCluster, name := "", "", ""
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		object, credCluster = createTarget(r.URL.Path, body)
		if clusterCreate.MatchString(r.URL.Path) {
			var in struct{ Name string }
			_ = json.Unmarshal(body, &in)
			name = strings.ToLower(in.Name)
		}
	}
	sw := &statusWriter{ResponseWriter: w, keep: credCluster != ""}
	l.next.ServeHTTP(sw, r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statuses[sw.status]++
	if object != "" {
		if l.creates[object] == nil {
			l.creates[object] = map[int]int{}
		}
		l.creates[object][sw.status]++
	}
	if name != "" && sw.status == http.StatusCreated {
		if l.named[name] == nil {
			l.named[name] = map[string]bool{}
		}
		l.named[name][object] = true
	}
	if credCluster != "" && sw.status == http.StatusCreated {
		var cred struct {
			Href string `json:"href"`
		}
		if json.Unmarshal(sw.body.Bytes(), &cred) == nil && cred.Href != "" {
			l.creds[strings.ToLower(cred.Href)] = true
		}
	}
}

// createTarget names the object a create POST makes ("" for other
// requests) or, for a credential POST, its cluster.
func createTarget(path string, body []byte) (object, credCluster string) {
	var in struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &in)
	id := strings.ToLower(in.ID)
	switch {
	case clusterCreate.MatchString(path):
		return "cluster/" + id, ""
	case nodePoolCreate.MatchString(path):
		return "nodepool/" + strings.ToLower(nodePoolCreate.FindStringSubmatch(path)[1]) + "/" + id, ""
	case externalAuthCreate.MatchString(path):
		return "externalauth/" + strings.ToLower(externalAuthCreate.FindStringSubmatch(path)[1]) + "/" + id, ""
	case credentialCreate.MatchString(path):
		return "", credentialCreate.FindStringSubmatch(path)[1]
	}
	return "", ""
}

// csCounts is a copy of the ledger for the checks and the summary.
type csCounts struct {
	creates  map[string]map[int]int
	statuses map[int]int
	creds    map[string]bool
	named    map[string]map[string]bool
}

func (l *csLedger) counts() csCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := csCounts{creates: map[string]map[int]int{}, statuses: map[int]int{}, creds: map[string]bool{}, named: map[string]map[string]bool{}}
	for n, ids := range l.named {
		c.named[n] = map[string]bool{}
		for id := range ids {
			c.named[n][id] = true
		}
	}
	for o, m := range l.creates {
		c.creates[o] = map[int]int{}
		for s, n := range m {
			c.creates[o][s] = n
		}
	}
	for s, n := range l.statuses {
		c.statuses[s] = n
	}
	for h := range l.creds {
		c.creds[h] = true
	}
	return c
}

// duplicateCreates lists the objects CS did not create exactly once: more
// than one POST it answered 201, a 409 adopted for an object no POST
// created, and the clusters created under more than one ID. A 409 (the
// object exists already, when two dispatches race or a create is retried
// after an answer was lost) is adopted by the lifecycle and creates
// nothing; POSTs answered by an injected 429/5xx never reached CS's create
// and are retries, not duplicates. An object whose only POSTs were refused
// was never created, which is right when its operation was superseded
// before a retry (the outcome checks judge the operation).
func (c csCounts) duplicateCreates() []string {
	var out []string
	for o, m := range c.creates {
		created := m[http.StatusCreated]
		if created > 1 || (created == 0 && m[http.StatusConflict] > 0) {
			out = append(out, o+": "+formatStatuses(m))
		}
	}
	for name, ids := range c.named {
		if len(ids) > 1 {
			keys := make([]string, 0, len(ids))
			for id := range ids {
				keys = append(keys, id)
			}
			sort.Strings(keys)
			out = append(out, fmt.Sprintf("cluster %s created %d times: %s", name, len(ids), strings.Join(keys, ", ")))
		}
	}
	sort.Strings(out)
	return out
}

// adopted counts the create POSTs CS refused with 409 because the object
// existed.
func (c csCounts) adopted() int {
	n := 0
	for _, m := range c.creates {
		n += m[http.StatusConflict]
	}
	return n
}

// posts counts the create POSTs for objects of kind, whatever the answer.
func (c csCounts) posts(kind string) int {
	n := 0
	for o, m := range c.creates {
		if strings.HasPrefix(o, kind+"/") {
			for _, k := range m {
				n += k
			}
		}
	}
	return n
}

func (c csCounts) objects(kind string) int {
	n := 0
	for o, m := range c.creates {
		if strings.HasPrefix(o, kind+"/") && m[http.StatusCreated] > 0 {
			n++
		}
	}
	return n
}

func formatStatuses(m map[int]int) string {
	codes := make([]int, 0, len(m))
	for s := range m {
		codes = append(codes, s)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, s := range codes {
		parts[i] = fmt.Sprintf("%d x%d", s, m[s])
	}
	return strings.Join(parts, ", ")
}
