// Package csfaults stands in front of Clusters Service (the simulator)
// and answers in its place during fault windows: a misrouted CS (its own
// 404 for every object, empty lists) or a gateway (404s that are not
// CS's). Tests put it in front of the in-memory fake or a simulator on a
// socket; the soak opens its windows mid-run.
package csfaults

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// Fault is what a window of a Proxy answers in Clusters Service's
// place.
type Fault int32

const (
	// Healthy passes every request on.
	Healthy Fault = iota
	// Misrouted is a CS that reads from the wrong place (another shard,
	// a path an upgrade moved): every object read gets CS's own
	// well-formed 404 and every search or list an empty list. Its writes
	// still reach CS: a write that is misrouted too cannot be told from
	// CS's word without reading the object back.
	Misrouted
	// Gateway is something in front of CS answering for it: reads get
	// 404s with an API gateway's body, `{}`, an empty JSON body or an HTML
	// page; writes get an HTML 404 or 502. (Gateway 400/421 bodies join
	// once the client tells them from CS's refusals: today a 400 of any
	// shape is one.)
	Gateway
)

func (f Fault) String() string {
	switch f {
	case Healthy:
		return "healthy"
	case Misrouted:
		return "misrouted"
	case Gateway:
		return "gateway"
	}
	return fmt.Sprintf("Fault(%d)", int32(f))
}

// Proxy stands in front of Clusters Service (the simulator's handler)
// and, while a fault is set, answers in its place. Requests to the
// simulator's own admin routes (/_sim/) always pass.
type Proxy struct {
	next     http.Handler
	fault    atomic.Int32
	answered [Gateway + 1]atomic.Int64 // requests answered, by fault
}

// New passes every request to next until Set says otherwise.
func New(next http.Handler) *Proxy { return &Proxy{next: next} }

// Set starts a fault window (or ends it, with Healthy).
func (f *Proxy) Set(fault Fault) { f.fault.Store(int32(fault)) }

// Fault is the window now.
func (f *Proxy) Fault() Fault { return Fault(f.fault.Load()) }

// Answered is how many requests a fault answered.
func (f *Proxy) Answered() int64 { return f.answered[Misrouted].Load() + f.answered[Gateway].Load() }

// AnsweredBy is how many requests fault answered.
func (f *Proxy) AnsweredBy(fault Fault) int64 {
	if fault <= Healthy || fault > Gateway {
		return 0
	}
	return f.answered[fault].Load()
}

func (f *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fault := f.Fault()
	read := r.Method == http.MethodGet
	if fault == Healthy || !strings.HasPrefix(r.URL.Path, "/api/") || fault == Misrouted && !read {
		f.next.ServeHTTP(w, r)
		return
	}
	n := f.answered[fault].Add(1)
	if fault == Misrouted {
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
	// A write answered so must neither count as done nor fail its
	// operation: none of these is CS's word (docs/failures.md).
	gatewayWrites = []gatewayAnswer{
		{http.StatusNotFound, "text/html", `<html><body><h1>404 Not Found</h1></body></html>`},
		{http.StatusBadGateway, "text/html", `<html><body><h1>502 Bad Gateway</h1></body></html>`},
		{http.StatusNotFound, "application/json", `{"statusCode":404,"message":"Resource not found"}`},
		{http.StatusBadRequest, "application/json", ``},
		{http.StatusBadRequest, "application/json", `{}`},
		{http.StatusBadRequest, "application/json", `{"statusCode":400,"message":"Bad Request"}`},
		{http.StatusConflict, "application/json", `{"error":"conflict"}`},
		{http.StatusMisdirectedRequest, "text/plain", `misdirected`},
		{http.StatusLocked, "application/json", ``},
		{http.StatusTooEarly, "application/json", ``},
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
