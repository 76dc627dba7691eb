package soak

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

// fakeInstance is a custom handler that records what it was sent; its
// ticks wait on hold while hold is set.
type fakeInstance struct {
	mu      sync.Mutex
	got     []string
	arrived chan struct{} // closed by the next request
	hold    chan struct{}
}

func (fi *fakeInstance) record(path string) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.got = append(fi.got, path)
	if fi.arrived != nil {
		close(fi.arrived)
		fi.arrived = nil
	}
}

// awaitRequests waits, generously, until the instance was sent n requests.
func (fi *fakeInstance) awaitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		fi.mu.Lock()
		got := len(fi.got)
		if fi.arrived == nil {
			fi.arrived = make(chan struct{})
		}
		arrived := fi.arrived
		fi.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("the instance was sent %d requests, want %d", got, n)
		}
	}
}

// awaitTicks waits, generously, until the fleet logged n ticks.
func awaitTicks(t *testing.T, f *fleet, n int) []tick {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ticks, err := f.awaitTicks(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return ticks
}

func (fi *fakeInstance) requests() []string {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return append([]string(nil), fi.got...)
}

func (fi *fakeInstance) Run(ctx context.Context, port int) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		fi.record(r.URL.Path)
		if r.URL.Path == "/broken" {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		fi.mu.Lock()
		hold := fi.hold
		fi.mu.Unlock()
		if hold != nil && r.URL.Path == "/pollOperations" {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprint(w, `{"Outputs":{},"Logs":[],"ReturnValue":null}`)
	})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	return srv.Close()
}

// startFleet runs a fleet of fakes until the test ends and returns its URL.
func startFleet(t *testing.T, fakes ...*fakeInstance) (*fleet, string) {
	t.Helper()
	f, err := newFleet(len(fakes), func(i int) triggerhost.Worker { return fakes[i] }, []string{"pollOperations"}, slog.New(slog.DiscardHandler))
	must(t, err)
	port, err := triggerhost.FreePort()
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, port) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet run: %v", err)
		}
	})
	// Run listens before it starts the instances: once every instance
	// answers, so does the fleet.
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	for _, sup := range f.instances {
		if err := sup.Ready(rctx); err != nil {
			t.Fatal(err)
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	resp, err := http.Get(url + "/")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the fleet's readiness ping answered %d", resp.StatusCode)
	}
	return f, url
}

func post(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"Data":{},"Metadata":{}}`))
	must(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestFleetSplitsBatchesAndTicksEveryInstance(t *testing.T) {
	a, b := &fakeInstance{}, &fakeInstance{}
	f, url := startFleet(t, a, b)
	for range 4 {
		if got := post(t, url+"/dispatchOperations"); got != http.StatusOK {
			t.Fatalf("batch answered %d", got)
		}
	}
	if got := post(t, url+"/pollOperations"); got != http.StatusOK {
		t.Fatalf("tick answered %d", got)
	}
	if got := post(t, url+"/broken"); got != http.StatusInternalServerError {
		t.Fatalf("a failing invocation answered %d", got)
	}
	if n, took := f.failedInvocations(); n != 1 || took <= 0 {
		t.Errorf("failed invocations %d taking %s, want 1", n, took)
	}
	// The host is answered by the first instance; wait for the other.
	ticks := awaitTicks(t, f, 2)
	_, routed := f.tickLog()
	if routed[0] != 3 || routed[1] != 2 {
		t.Errorf("batches by instance %v, want 3 and 2", routed)
	}
	// Each instance's requests, sorted: a tick may reach one after the
	// request sent next.
	for i, want := range []string{"/broken /dispatchOperations /dispatchOperations /pollOperations",
		"/dispatchOperations /dispatchOperations /pollOperations"} {
		got := []*fakeInstance{a, b}[i].requests()
		slices.Sort(got)
		if got := strings.Join(got, " "); got != want {
			t.Errorf("instance %d was sent %q, want %q", i, got, want)
		}
	}
	if len(ticks) != 2 || ticks[0].instance == ticks[1].instance || ticks[0].status != 200 || ticks[1].status != 200 {
		t.Errorf("ticks %+v, want one answered tick per instance", ticks)
	}
}

func TestFleetTickSkipsABusyInstanceAndTimesIt(t *testing.T) {
	a, b := &fakeInstance{}, &fakeInstance{hold: make(chan struct{})}
	f, url := startFleet(t, a, b)
	post(t, url+"/pollOperations") // a answers; b holds its tick
	post(t, url+"/pollOperations") // b is still busy: only a gets it
	// What is checked is the fleet's timing of a tick in real time: b's
	// is held 50ms at least.
	time.Sleep(50 * time.Millisecond)
	close(b.hold)
	ticks := awaitTicks(t, f, 3)
	if n := len(a.requests()); n != 2 {
		t.Errorf("instance 0 got %d ticks, want 2", n)
	}
	if n := len(b.requests()); n != 1 {
		t.Errorf("instance 1 got %d ticks while busy with one, want 1", n)
	}
	var held tick
	for _, tk := range ticks {
		if tk.instance == 1 {
			held = tk
		}
	}
	if held.status != 200 || held.took < 50*time.Millisecond || held.cut {
		t.Errorf("the held tick was timed as %+v, want 200 after at least 50ms", held)
	}
}

func TestFleetKillCutsATick(t *testing.T) {
	a := &fakeInstance{hold: make(chan struct{})}
	f, url := startFleet(t, a)
	go func() { // answered with a 502 once the kill cuts it
		if resp, err := http.Post(url+"/pollOperations", "application/json", strings.NewReader("{}")); err == nil {
			resp.Body.Close()
		}
	}()
	a.awaitRequests(t, 1)
	f.Restart()
	ticks := awaitTicks(t, f, 1)
	if len(ticks) != 1 || ticks[0].status != 0 || !ticks[0].cut {
		t.Fatalf("ticks %+v, want one cut short by the kill", ticks)
	}
	if problems := tickProblems(ticks, tickBound); len(problems) > 0 {
		t.Errorf("a tick cut by a kill is reported: %v", problems)
	}
	sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
	defer scancel()
	must(t, f.instances[0].AwaitStarts(sctx, 2))
	if n := f.Starts(); n != 2 {
		t.Errorf("starts after one kill: %d, want 2", n)
	}
}
