package testsupport

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// CSFault is what a window of CSFaults answers in Clusters Service's
// place.
type CSFault int32

const (
	// CSHealthy passes every request on.
	CSHealthy CSFault = iota
	// CSMisrouted is a CS that reads from the wrong place (another shard,
	// a path an upgrade moved): every object read gets CS's own
	// well-formed 404 and every search or list an empty list. Its writes
	// still reach CS: a write that is misrouted too cannot be told from
	// CS's word without reading the object back.
	CSMisrouted
	// CSGateway is something in front of CS answering for it: reads get
	// 404s with an API gateway's body, `{}`, an empty JSON body or an HTML
	// page; writes get an HTML 404 or 502. (Gateway 400/421 bodies join
	// once the client tells them from CS's refusals: today a 400 of any
	// shape is one.)
	CSGateway
)

func (f CSFault) String() string {
	switch f {
	case CSHealthy:
		return "healthy"
	case CSMisrouted:
		return "misrouted"
	case CSGateway:
		return "gateway"
	}
	return fmt.Sprintf("CSFault(%d)", int32(f))
}

// CSFaults stands in front of Clusters Service (the simulator's handler)
// and, while a fault is set, answers in its place. Requests to the
// simulator's own admin routes (/_sim/) always pass.
type CSFaults struct {
	next     http.Handler
	fault    atomic.Int32
	answered atomic.Int64 // requests answered by a fault
}

// NewCSFaults passes every request to next until Set says otherwise.
func NewCSFaults(next http.Handler) *CSFaults { return &CSFaults{next: next} }

// Set starts a fault window (or ends it, with CSHealthy).
func (f *CSFaults) Set(fault CSFault) { f.fault.Store(int32(fault)) }

// Fault is the window now.
func (f *CSFaults) Fault() CSFault { return CSFault(f.fault.Load()) }

// Answered is how many requests a fault answered.
func (f *CSFaults) Answered() int64 { return f.answered.Load() }

func (f *CSFaults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fault := f.Fault()
	read := r.Method == http.MethodGet
	if fault == CSHealthy || !strings.HasPrefix(r.URL.Path, "/api/") || fault == CSMisrouted && !read {
		f.next.ServeHTTP(w, r)
		return
	}
	n := f.answered.Add(1)
	if fault == CSMisrouted {
		if kind, ok := listKind(r); ok {
			writeBody(w, http.StatusOK, "application/json",
				fmt.Sprintf(`{"kind":%q,"page":1,"size":0,"total":0,"items":[]}`, kind))
			return
		}
		writeOCMNotFound(w, r, n)
		return
	}
	answers := gatewayReads
	if !read {
		answers = gatewayWrites
	}
	a := answers[int(n)%len(answers)]
	writeBody(w, a.status, a.contentType, a.body)
}

// gatewayAnswer is one answer of a gateway standing in for CS.
type gatewayAnswer struct {
	status            int
	contentType, body string
}

var (
	gatewayReads = []gatewayAnswer{
		{http.StatusNotFound, "application/json", `{"statusCode":404,"message":"Resource not found"}`},
		{http.StatusNotFound, "application/json", `{}`},
		{http.StatusNotFound, "application/json", ``},
		{http.StatusNotFound, "text/html", `<html><body><h1>404 Not Found</h1></body></html>`},
	}
	gatewayWrites = []gatewayAnswer{
		{http.StatusNotFound, "text/html", `<html><body><h1>404 Not Found</h1></body></html>`},
		{http.StatusBadGateway, "text/html", `<html><body><h1>502 Bad Gateway</h1></body></html>`},
	}
)

// listKind is the OCM list kind a GET reads, when it reads a list: a
// collection path, or any search.
func listKind(r *http.Request) (string, bool) {
	last := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	kinds := map[string]string{"clusters": "ClusterList", "node_pools": "NodePoolList",
		"external_auths": "ExternalAuthList", "break_glass_credentials": "BreakGlassCredentialList"}
	if k, ok := kinds[last]; ok {
		return k, true
	}
	if r.URL.Query().Has("search") {
		return "List", true
	}
	return "", false
}

// writeOCMNotFound is CS's own 404, as the simulator and CS word it.
func writeOCMNotFound(w http.ResponseWriter, r *http.Request, n int64) {
	prefix := "/api/aro_hcp/v1alpha1"
	if strings.HasPrefix(r.URL.Path, "/api/clusters_mgmt/v1") {
		prefix = "/api/clusters_mgmt/v1"
	}
	opID := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	w.Header().Set("X-Operation-Id", opID)
	writeBody(w, http.StatusNotFound, "application/json", fmt.Sprintf(
		`{"kind":"Error","id":"404","href":"%s/errors/404","code":"CLUSTERS-MGMT-404","reason":"Object '%s' not found","operation_id":%q}`,
		prefix, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], opID))
}

func writeBody(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// NewCSFaultsProxy is CSFaults in front of a Clusters Service on
// 127.0.0.1 (the simulator), for tests that reach it over a socket; it
// returns the faults and the URL to name, and stops with the test.
func NewCSFaultsProxy(t testing.TB, target string) (*CSFaults, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := NewCSFaults(httputil.NewSingleHostReverseProxy(u))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}
