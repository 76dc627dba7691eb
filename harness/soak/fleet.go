package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

// fleet is the custom handler as the trigger host sees it: n `hcpops serve`
// processes (instances) behind one loopback port, as a scaled-out Function
// App runs them on one database. Change-feed batches and HTTP requests go to
// the instances in turn, so a batch and its redelivery usually land on
// different instances; every timer tick goes to every instance not still
// busy with its last one, so the instances' ticks overlap on the same
// operations. The fleet times every tick.
type fleet struct {
	instances []*triggerhost.Supervisor
	timers    map[string]bool // timer function names, as invocation paths
	client    *http.Client
	logger    *slog.Logger
	next      atomic.Uint64  // round robin
	killed    atomic.Uint64  // which instance the next kill takes
	kills     []atomic.Int64 // kills by instance
	lastKill  []atomic.Int64 // UnixNano of each instance's last kill

	ticking []atomic.Bool  // an instance's tick is in flight
	bg      sync.WaitGroup // ticks answered for already, still running

	mu     sync.Mutex
	ctx    context.Context // Run's; ticks outlive the host's request
	ticks  []tick
	ticked chan struct{} // closed by the next tick logged
	routed map[int]int   // other requests (change-feed batches, HTTP) by instance
	// failed counts the other invocations an instance failed (non-2xx or
	// no answer) and the time they took.
	failed     int
	failedTook time.Duration
}

// tick is one timer invocation of one instance.
type tick struct {
	instance int
	started  time.Time
	took     time.Duration
	status   int    // 0: no answer
	err      string // why there was no answer
	// cut: the instance was killed while the tick ran, or the run ended.
	cut bool
}

// newFleet prepares n instances; worker(i) runs instance i.
func newFleet(n int, worker func(i int) triggerhost.Worker, timers []string, logger *slog.Logger) (*fleet, error) {
	f := &fleet{timers: map[string]bool{}, logger: logger, routed: map[int]int{},
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}}
	for _, name := range timers {
		f.timers["/"+strings.ToLower(name)] = true
	}
	for i := range n {
		sup, err := triggerhost.NewSupervisor(worker(i), 0, logger.With("instance", i))
		if err != nil {
			return nil, err
		}
		f.instances = append(f.instances, sup)
	}
	f.kills, f.lastKill, f.ticking = make([]atomic.Int64, n), make([]atomic.Int64, n), make([]atomic.Bool, n)
	return f, nil
}

// Run serves the fleet's port and keeps every instance running until ctx
// is done. It is run once: the instances' supervisors restart them.
func (f *fleet) Run(ctx context.Context, port int) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("soak fleet: %w", err)
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.mu.Lock()
	f.ctx = ctx
	f.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, len(f.instances)+1)
	for _, sup := range f.instances {
		wg.Go(func() { errs <- sup.Run(ctx) })
	}
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("soak fleet: %w", err)
		}
	})
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	cancel()
	_ = srv.Close()
	wg.Wait()
	f.bg.Wait()
	f.client.CloseIdleConnections()
	return err
}

// Restart kills one instance, each in turn.
func (f *fleet) Restart() {
	i := int(f.killed.Add(1)-1) % len(f.instances)
	f.logger.Info("soak: killing a handler instance", "instance", i)
	f.kills[i].Add(1)
	f.lastKill[i].Store(time.Now().UnixNano())
	f.instances[i].Restart()
}

// Starts counts the starts of every instance.
func (f *fleet) Starts() int {
	n := 0
	for _, sup := range f.instances {
		n += sup.Starts()
	}
	return n
}

func (f *fleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/" {
		// The host's readiness ping: ready once every instance is.
		for _, sup := range f.instances {
			if sup.Ready(r.Context()) != nil {
				return
			}
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if r.Method == http.MethodPost && f.timers[strings.ToLower(r.URL.Path)] {
		f.fanOut(w, r, body)
		return
	}
	i := int(f.next.Add(1)-1) % len(f.instances)
	f.mu.Lock()
	f.routed[i]++
	f.mu.Unlock()
	begun := time.Now()
	a := f.forward(r.Context(), r, body, i)
	if a.status/100 != 2 && !strings.Contains(strings.TrimPrefix(r.URL.Path, "/"), "/") {
		f.mu.Lock()
		f.failed++
		f.failedTook += time.Since(begun)
		f.mu.Unlock()
	}
	a.write(w)
}

// fanOut sends a tick to every instance not still busy with the last one
// (an instance's timer never overlaps itself) and answers the host with the
// first answer; the others finish in the background.
func (f *fleet) fanOut(w http.ResponseWriter, r *http.Request, body []byte) {
	ctx := f.runContext()
	first := make(chan answer, len(f.instances))
	sent := 0
	for i := range f.instances {
		if !f.ticking[i].CompareAndSwap(false, true) {
			continue
		}
		sent++
		f.bg.Go(func() {
			defer f.ticking[i].Store(false)
			first <- f.tick(ctx, r, body, i)
		})
	}
	if sent == 0 {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"Outputs":{},"Logs":["soak fleet: every instance is still busy with its last tick"],"ReturnValue":null}`)
		return
	}
	select {
	case a := <-first:
		a.write(w)
	case <-r.Context().Done():
	}
}

// tick runs one timer invocation on instance i and times it.
func (f *fleet) tick(ctx context.Context, r *http.Request, body []byte, i int) answer {
	// The clock starts once the instance is up: waiting for a restart is
	// the host's time, not the tick's.
	if err := f.instances[i].Ready(ctx); err != nil {
		return answer{err: err}
	}
	kills := f.kills[i].Load()
	begun := time.Now()
	tctx, cancel := context.WithTimeout(ctx, tickGiveUp)
	defer cancel()
	a := f.forward(tctx, r, body, i)
	t := tick{instance: i, started: begun, took: time.Since(begun), status: a.status,
		cut: f.kills[i].Load() != kills || ctx.Err() != nil || a.status == 0 && f.justKilled(i, begun)}
	if a.err != nil {
		t.err = a.err.Error()
	}
	f.mu.Lock()
	f.ticks = append(f.ticks, t)
	if f.ticked != nil {
		close(f.ticked)
		f.ticked = nil
	}
	f.mu.Unlock()
	return a
}

// awaitTicks waits until n ticks are logged, or ctx is done, and returns
// the log.
func (f *fleet) awaitTicks(ctx context.Context, n int) ([]tick, error) {
	for {
		f.mu.Lock()
		ticks := append([]tick(nil), f.ticks...)
		if f.ticked == nil {
			f.ticked = make(chan struct{})
		}
		ticked := f.ticked
		f.mu.Unlock()
		if len(ticks) >= n {
			return ticks, nil
		}
		select {
		case <-ticked:
		case <-ctx.Done():
			return ticks, fmt.Errorf("%d of %d ticks logged: %w", len(ticks), n, context.Cause(ctx))
		}
	}
}

func (f *fleet) runContext() context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctx
}

// justKilled reports whether instance i was killed shortly before t: its
// supervisor may not have seen the process die yet and still sends to it.
func (f *fleet) justKilled(i int, t time.Time) bool {
	last := f.lastKill[i].Load()
	return last != 0 && t.Sub(time.Unix(0, last)) < killNoticeGrace
}

// killNoticeGrace is how long after a kill a failed request is put down
// to it; tickGiveUp is how long the fleet waits for a tick's answer, well
// past the bound the checks allow, so a hung tick is reported, not waited
// for until the run ends.
const (
	killNoticeGrace = 5 * time.Second
	tickGiveUp      = 3 * tickBound
)

// answer is an instance's answer, or why there was none.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) write(w http.ResponseWriter) {
	if a.err != nil {
		http.Error(w, a.err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range a.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// forward sends a request to instance i once it is ready.
func (f *fleet) forward(ctx context.Context, r *http.Request, body []byte, i int) answer {
	sup := f.instances[i]
	if err := sup.Ready(ctx); err != nil {
		return answer{err: err}
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, sup.BaseURL()+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	copyHeaders(out.Header, r.Header)
	resp, err := f.client.Do(out)
	if err != nil {
		return answer{err: fmt.Errorf("instance %d: %w", i, err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{err: fmt.Errorf("instance %d: reading the answer: %w", i, err)}
	}
	h := http.Header{}
	copyHeaders(h, resp.Header)
	return answer{status: resp.StatusCode, header: h, body: raw}
}

// failedInvocations counts the invocations other than ticks that failed,
// and the time they took.
func (f *fleet) failedInvocations() (int, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed, f.failedTook
}

// tickLog copies the ticks timed so far, and the other requests each
// instance was sent.
func (f *fleet) tickLog() ([]tick, map[int]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	routed := map[int]int{}
	for i, n := range f.routed {
		routed[i] = n
	}
	return append([]tick(nil), f.ticks...), routed
}
