package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// armFront stands in for ARM and ARO-HCP's frontend in front of the
// rig: it accepts a cluster PUT (201 with Azure-AsyncOperation, as
// ARO-HCP answers it) and a credential POST (202 with Location and
// Azure-AsyncOperation), and serves the cluster's GET from the store, so
// the SDK's own poller can run against the real status and results
// routes. last is the operation it accepted last.
func (r *armRig) armFront() (front *httptest.Server, last *atomic.Pointer[document.OperationDocument]) {
	r.T.Helper()
	last = &atomic.Pointer[document.OperationDocument]{}
	asyncHeaders := func(w http.ResponseWriter, op *document.OperationDocument) {
		last.Store(op)
		w.Header().Set("Azure-AsyncOperation", r.Handler.URL+statusPathOf(op.Name()))
		w.Header().Set("Location", r.Handler.URL+resultPath(op.Name()))
	}
	resourceBody := func(ctx context.Context, id string) ([]byte, error) {
		item, err := r.App.Store.Get(ctx, sub, document.CosmosID(id))
		if err != nil {
			return nil, err
		}
		res, err := document.ParseResource(item.Body)
		if err != nil {
			return nil, err
		}
		return res.ARMBody(id)
	}
	front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, id := req.Context(), req.URL.Path
		var (
			a    frontend.Accepted
			body []byte
			err  error
		)
		status := http.StatusOK
		switch {
		case req.Method == http.MethodPut:
			a, err = r.fe.PutCluster(ctx, id, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, r.opts())
			if err == nil {
				asyncHeaders(w, a.Operation)
				w.Header().Del("Location") // a PUT's answer has Azure-AsyncOperation only
				body, err = resourceBody(ctx, id)
				status = http.StatusCreated
			}
		case req.Method == http.MethodPost && strings.HasSuffix(id, "/requestadmincredential"):
			a, err = r.fe.RequestCredential(ctx, strings.TrimSuffix(id, "/requestadmincredential"), r.opts())
			if err == nil {
				asyncHeaders(w, a.Operation)
				status = http.StatusAccepted
			}
		case req.Method == http.MethodGet:
			body, err = resourceBody(ctx, id)
		default:
			err = fmt.Errorf("%s %s is not served", req.Method, id)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	r.T.Cleanup(front.Close)
	return front, last
}

// sdkClient is an azcore pipeline as an SDK client builds it, calling
// with ARM's headers; it counts the GETs on the status route, and with
// stripRetryAfter drops Retry-After from every answer, as hcpops before
// it sent none.
type sdkClient struct {
	pl              runtime.Pipeline
	statusPolls     atomic.Int32
	stripRetryAfter bool
	// polled is closed once the first status poll has its answer.
	polled     chan struct{}
	polledOnce sync.Once
}

func (r *armRig) newSDKClient(stripRetryAfter bool) *sdkClient {
	c := &sdkClient{stripRetryAfter: stripRetryAfter, polled: make(chan struct{})}
	c.pl = runtime.NewPipeline("hcpops-test", "v0", runtime.PipelineOptions{}, &policy.ClientOptions{
		Transport:       r.Handler.Client(),
		Retry:           policy.RetryOptions{MaxRetries: -1},
		PerCallPolicies: []policy.Policy{c},
	})
	return c
}

// Do is the client's policy: ARM's identity headers in, the count and
// the optional strip out.
func (c *sdkClient) Do(req *policy.Request) (*http.Response, error) {
	h := req.Raw().Header
	h.Set("X-MS-CLIENT-PRINCIPAL", armPrincipal())
	h.Set("X-Ms-Home-Tenant-Id", tenant)
	h.Set("X-Ms-Client-Object-Id", armClient)
	status := req.Raw().Method == http.MethodGet && strings.Contains(req.Raw().URL.Path, "/hcpOperationStatuses/")
	if status {
		c.statusPolls.Add(1)
	}
	resp, err := req.Next()
	if status {
		c.polledOnce.Do(func() { close(c.polled) })
	}
	if err == nil && c.stripRetryAfter {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}

// start sends the request that starts an operation and hands its answer
// to the SDK's poller.
func (c *sdkClient) start(t *testing.T, method, url string) *runtime.Poller[json.RawMessage] {
	t.Helper()
	req, err := runtime.NewRequest(context.Background(), method, url+"?api-version="+armAPIVersion)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.pl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if !runtime.HasStatusCode(resp, http.StatusCreated, http.StatusAccepted) {
		t.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
	p, err := runtime.NewPoller[json.RawMessage](resp, c.pl, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSDKPollerWaitsRetryAfter: azcore's poller, as PollUntilDone runs
// it, sees a cluster create (the simulator's 24 s: validating, pending,
// installing) to its end, on a manual clock the host's 10 s timer ticks
// on, once for each phase of the timer against the create's start.
// Before hcpops sent Retry-After the poller waited its default 30 s
// between polls; now it waits the 10 s each answer says, and sees the
// create done sooner, never later.
func TestSDKPollerWaitsRetryAfter(t *testing.T) {
	type run struct {
		polls int32
		seen  time.Duration
	}
	runs := map[bool][]run{}
	for phase := range 10 {
		for _, strip := range []bool{true, false} {
			polls, seen, waits := sdkCreate(t, strip, time.Duration(phase)*time.Second)
			want := 10 * time.Second
			if strip {
				want = 30 * time.Second
			}
			// The waits happened, each of what the answer said, and they
			// are all the time that passed: a create seen done at the first
			// poll, or waits the loop never slept, fail here.
			var slept time.Duration
			for _, w := range waits {
				slept += w
				if w != want {
					t.Errorf("phase %d s, Retry-After stripped %v: waits %v, want each %s", phase, strip, waits, want)
				}
			}
			if len(waits) == 0 || int(polls) != len(waits)+1 || slept != seen || seen < createTakes {
				t.Errorf("phase %d s, Retry-After stripped %v: %d polls, waits %v (%s) and seen done after %s; want a wait "+
					"between polls, the waits making up the time, and no less than the simulator's %s create",
					phase, strip, polls, waits, slept, seen, createTakes)
			}
			runs[strip] = append(runs[strip], run{polls, seen})
		}
		if before, now := runs[true][phase], runs[false][phase]; now.seen > before.seen {
			t.Errorf("phase %d s: seen done after %s with Retry-After, %s without", phase, now.seen, before.seen)
		}
	}
	var with, without time.Duration
	for phase := range runs[false] {
		with, without = with+runs[false][phase].seen, without+runs[true][phase].seen
	}
	if with >= without {
		t.Errorf("seen done after %s in all with Retry-After, %s without; want sooner", with, without)
	}
	for _, strip := range []bool{true, false} {
		var polls int32
		var seen time.Duration
		for _, r := range runs[strip] {
			polls += r.polls
			seen += r.seen
		}
		n := len(runs[strip])
		t.Logf("Retry-After stripped %-5v: status polls %v, mean %.1f; create seen done after mean %s (per phase %v)", strip,
			pollCounts(runs[strip], func(r run) int32 { return r.polls }), float64(polls)/float64(n), seen/time.Duration(n),
			pollCounts(runs[strip], func(r run) time.Duration { return r.seen }))
	}
}

// createTakes is how long the simulator takes to create a cluster: no
// poller can see one done sooner.
var createTakes = func() time.Duration {
	d := simulator.DefaultDurations()
	return d.ClusterValidating + d.ClusterPending + d.ClusterInstalling
}()

func pollCounts[R any, V any](rs []R, f func(R) V) []V {
	out := make([]V, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// sdkCreate runs one cluster create under azcore's poller, the timer
// ticking phase after each 10 s mark of the create's clock, and returns
// the status polls it made, when it saw the create done and the waits
// between polls.
func sdkCreate(t *testing.T, stripRetryAfter bool, phase time.Duration) (int32, time.Duration, []time.Duration) {
	t.Helper()
	clk := testsupport.NewClock(time.Now())
	r := newARMRigAt(t, nil, clk)
	front, _ := r.armFront()
	c := r.newSDKClient(stripRetryAfter)
	ctx := context.Background()
	p := c.start(t, http.MethodPut, front.URL+clusterRID("c1"))
	var ran time.Duration // the simulated clock's time since the PUT
	wait := func(d time.Duration) {
		for range int(d / time.Second) {
			ran += time.Second
			r.Sim.Advance(time.Second)
			clk.Advance(time.Second)
			r.deliver()
			if (ran-phase)%(10*time.Second) == 0 {
				r.invoke("/pollOperations", r.tickPayload)
			}
		}
	}
	// Bounded: a create the poller never sees done (or a Retry-After of 0,
	// which would spin without the clock moving) fails, naming its polls.
	const simulatedLimit, pollLimit = 10 * time.Minute, 100
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var waits []time.Duration
	for {
		if ran >= simulatedLimit || len(waits) >= pollLimit {
			t.Fatalf("the create not seen done after %s of the simulated clock and %d polls (waits %v)", ran, len(waits)+1, waits)
		}
		resp, err := p.Poll(ctx)
		if err != nil {
			t.Fatalf("poll %d after %s: %v", len(waits)+1, ran, err)
		}
		if p.Done() {
			break
		}
		d := 30 * time.Second // PollUntilDone's default Frequency
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			d = time.Duration(s) * time.Second
		}
		waits = append(waits, d)
		wait(d)
	}
	body, err := p.Result(ctx)
	var cluster struct {
		Properties struct{ ProvisioningState string }
	}
	if err != nil || json.Unmarshal(body, &cluster) != nil || cluster.Properties.ProvisioningState != "Succeeded" {
		t.Fatalf("result %s, %v; want the cluster, Succeeded", body, err)
	}
	return c.statusPolls.Load(), ran, waits
}

// TestSDKPollerCredentialRequest: PollUntilDone itself, on real time,
// drives a credential request through the status route to the results
// route's credential, and waits the 10 s Retry-After said, not its
// default 30 s.
func TestSDKPollerCredentialRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 10 s of real time")
	}
	r := newARMRig(t, nil)
	front, last := r.armFront()
	ctx := context.Background()
	create := r.accepted(r.fe.PutCluster(ctx, clusterRID("c1"), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, r.opts()))
	r.drive(create)

	c := r.newSDKClient(false)
	p := c.start(t, http.MethodPost, front.URL+clusterRID("c1")+"/requestadmincredential")
	type outcome struct {
		body json.RawMessage
		err  error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		body, err := p.PollUntilDone(ctx, nil) // the default Frequency, 30 s
		done <- outcome{body, err}
	}()
	<-c.polled
	// The first poll saw it running; the lifecycle finishes it meanwhile.
	r.drive(last.Load())
	got := <-done
	took := time.Since(start)
	var cred struct{ Kubeconfig string }
	if got.err != nil || json.Unmarshal(got.body, &cred) != nil || !strings.Contains(cred.Kubeconfig, "kind: Config") {
		t.Fatalf("PollUntilDone = %.80s, %v; want the credential", got.body, got.err)
	}
	t.Logf("credential request: %d status polls, done after %s", c.statusPolls.Load(), took.Round(100*time.Millisecond))
	if c.statusPolls.Load() != 2 || took < 10*time.Second || took >= 30*time.Second {
		t.Errorf("%d status polls in %s; want 2, the second after Retry-After's 10 s", c.statusPolls.Load(), took)
	}
}
