package dst

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/simulator"
)

// csNet is the network between hcpops and Clusters Service: every
// request parks at the scheduler's gate, the oracle samples CS's truth
// before the simulator sees it, and the run's fault windows may answer
// in CS's place (a misrouted replica, a gateway, a storm, a hang, an
// answer cache keyed without the id, a slow accept, a lost DELETE).
type csNet struct {
	w    *world
	sim  *simulator.Simulator
	next http.RoundTripper // the simulator, in memory
}

func newCSNet(w *world, sim *simulator.Simulator) *csNet {
	n := &csNet{w: w, sim: sim}
	n.next = invoke.InMemory(http.HandlerFunc(n.serveSim))
	return n
}

// serveSim is the simulator, with every answer it gives (CS's own word)
// shown to the oracle.
func (n *csNet) serveSim(w http.ResponseWriter, r *http.Request) {
	rec := &answer{ResponseWriter: w}
	n.sim.ServeHTTP(rec, r)
	n.w.oracle.csAnswered(r.Method, r.URL.Path, rec.status)
}

type answer struct {
	http.ResponseWriter
	status int
}

func (a *answer) WriteHeader(s int) {
	if a.status == 0 {
		a.status = s
	}
	a.ResponseWriter.WriteHeader(s)
}

func (a *answer) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.ResponseWriter.Write(b)
}

func (n *csNet) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	what := "cs " + req.Method + " " + req.URL.Path + "?" + req.URL.RawQuery
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		closeBody(req)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		what += " " + digest(body)
	}
	n.w.sched.gate(ctx, what)
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	n.w.oracle.sample()
	f := n.w.faults.cs(req)
	if f == nil {
		return n.next.RoundTrip(req)
	}
	n.w.cover.fault(f.kind, req)
	switch f.kind {
	case faultMisroute:
		if req.Method == http.MethodGet {
			closeBody(req)
			if kind, ok := listKind(req.URL.Path, req.URL.RawQuery); ok {
				return reply(req, http.StatusOK, "application/json",
					fmt.Sprintf(`{"kind":%q,"page":1,"size":0,"total":0,"items":[]}`, kind)), nil
			}
			return ocmNotFound(req), nil
		}
		if req.Method == http.MethodDelete && f.deletes {
			closeBody(req)
			return ocmNotFound(req), nil
		}
	case faultGateway:
		closeBody(req)
		a := gatewayBodies[n.w.faults.draw(len(gatewayBodies))]
		return reply(req, a.status, a.ct, a.body), nil
	case faultStorm:
		closeBody(req)
		status := []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusInternalServerError}[n.w.faults.draw(3)]
		return reply(req, status, "application/json", ""), nil
	case faultHang:
		closeBody(req)
		return nil, hang(ctx)
	case faultLatency:
		if !sleep(ctx, f.latency) {
			closeBody(req)
			return nil, ctx.Err()
		}
		// Requests slowed alike wake at one instant: the scheduler, not
		// the runtime, says which reaches CS first (seed 201327 ran two
		// ways when a node pool's DELETE and its cluster's raced so).
		n.w.sched.gate(ctx, what+" after "+f.latency.String())
		if err := ctx.Err(); err != nil {
			closeBody(req)
			return nil, err
		}
	case faultOtherObject:
		// A cache answers reads: a write goes through to CS.
		if other := n.otherObject(req.URL.Path); other != "" && req.Method == http.MethodGet {
			n.w.trace.note("fault other-object: %s answered as %s", req.URL.Path, other)
			r2 := req.Clone(ctx)
			r2.URL.Path = other
			return n.next.RoundTrip(r2)
		}
	case faultSlowAccept:
		if req.Method == http.MethodPost {
			return n.slowAccept(req, f.latency)
		}
	case faultLostDelete:
		if req.Method == http.MethodDelete {
			closeBody(req)
			return nil, errors.New("connection reset by peer (the DELETE was lost)")
		}
	}
	return n.next.RoundTrip(req)
}

// slowAccept lands the POST after d whatever the client does meanwhile:
// a client that gave up sees its own timeout, and CS creates the object
// anyway.
func (n *csNet) slowAccept(req *http.Request, d time.Duration) (*http.Response, error) {
	ctx := req.Context()
	body, err := io.ReadAll(req.Body)
	closeBody(req)
	if err != nil {
		return nil, err
	}
	landed := make(chan *http.Response, 1)
	land := req.Clone(withActor(context.WithoutCancel(ctx), "cs-accept"))
	n.w.bg.Add(1)
	n.w.bgLive.Add(1)
	go func() {
		defer n.w.bg.Done()
		defer n.w.bgLive.Add(-1)
		time.Sleep(d)
		n.w.sched.gate(land.Context(), "cs lands POST "+land.URL.Path)
		land.Body = io.NopCloser(bytes.NewReader(body))
		n.w.oracle.sample()
		resp, err := n.next.RoundTrip(land)
		if err != nil {
			landed <- nil
			return
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		n.w.trace.note("cs landed a slow POST %s after %s: %d", land.URL.Path, d, resp.StatusCode)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		landed <- resp
	}()
	select {
	case resp := <-landed:
		if resp == nil {
			return nil, errors.New("the slow POST failed")
		}
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// otherObject is the href of another object of the kind path reads (with
// the same tail: /status), as a cache keyed without the id would answer;
// "" when CS has no other.
func (n *csNet) otherObject(path string) string {
	kind, tail := objectOf(path)
	if kind == "" {
		return ""
	}
	for _, href := range sortedHrefs(n.w.oracle.now()) {
		o := n.w.oracle.now()[href]
		if o.Kind == kind && !strings.HasPrefix(path, href+tail) && path != href+tail {
			return href + tail
		}
	}
	return ""
}

// objectOf is the kind of object a single-object path reads, and what
// follows its href ("/status" or "").
func objectOf(path string) (kind, tail string) {
	base, tail := path, ""
	if b, ok := strings.CutSuffix(path, "/status"); ok {
		base, tail = b, "/status"
	}
	switch k, _ := cs.ParseHref(base); k {
	case cs.HrefCluster:
		return simulator.KindCluster, tail
	case cs.HrefNodePool:
		return simulator.KindNodePool, tail
	case cs.HrefExternalAuth:
		return simulator.KindExternalAuth, tail
	}
	return "", ""
}

// listKind is the OCM list kind a GET reads, when it reads a list.
func listKind(path, query string) (string, bool) {
	last := path[strings.LastIndex(path, "/")+1:]
	switch last {
	case "clusters":
		return "ClusterList", true
	case "node_pools":
		return "NodePoolList", true
	case "external_auths":
		return "ExternalAuthList", true
	case "break_glass_credentials":
		return "BreakGlassCredentialList", true
	case "upgrade_policies":
		return "NodePoolUpgradePolicyList", true
	case "control_plane_upgrade_policies":
		return "ControlPlaneUpgradePolicyList", true
	case "inflight_checks":
		return "InflightCheckList", true
	case "versions":
		return "VersionList", true
	}
	if strings.Contains(query, "search=") {
		return "List", true
	}
	return "", false
}

type gatewayAnswer struct {
	status   int
	ct, body string
}

var gatewayBodies = []gatewayAnswer{
	{http.StatusNotFound, "application/json", `{"statusCode":404,"message":"Resource not found"}`},
	{http.StatusNotFound, "application/json", `{}`},
	{http.StatusNotFound, "application/json", ``},
	{http.StatusBadGateway, "text/html", `<html><body><h1>502 Bad Gateway</h1></body></html>`},
	{http.StatusNotFound, "text/html", `<html><body><h1>404 Not Found</h1></body></html>`},
}

// ocmNotFound is CS's own 404, worded as CS words it.
func ocmNotFound(req *http.Request) *http.Response {
	prefix := cs.AroHCPPrefix
	if strings.HasPrefix(req.URL.Path, cs.ClustersMgmtPrefix) {
		prefix = cs.ClustersMgmtPrefix
	}
	id := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	return reply(req, http.StatusNotFound, "application/json", fmt.Sprintf(
		`{"kind":"Error","id":"404","href":"%s/errors/404","code":"CLUSTERS-MGMT-404","reason":"Object '%s' not found"}`, prefix, id))
}

func reply(req *http.Request, status int, ct, body string) *http.Response {
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {ct}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// sleep waits d or until ctx ends; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// bgGroup counts the goroutines the network runs on CS's side (slow
// accepts), so a run ends only once they have.
type bgGroup = sync.WaitGroup

// hang holds a request the way a CS that never answers does. It ends a
// millisecond before the caller's deadline, with the error the caller
// would see, rather than at it: two timers due at one instant fire in no
// fixed order, and a replay must not depend on which.
func hang(ctx context.Context) error {
	if d, ok := ctx.Deadline(); ok {
		if sleep(ctx, time.Until(d)-time.Millisecond) {
			return fmt.Errorf("the request hung: %w", context.DeadlineExceeded)
		}
		return ctx.Err()
	}
	<-ctx.Done()
	return ctx.Err()
}
