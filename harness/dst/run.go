package dst

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/lifecycle"
)

// Options shape a run.
type Options struct {
	// Duration is the simulated time of requests and faults: a simulated
	// hour of a small region by default.
	Duration time.Duration
	// Settle is the simulated time after it, faults healed and no new
	// request, by whose end every operation must be terminal or reported
	// stuck.
	Settle time.Duration
	// Intensity scales the number of fault windows (0: none; 1: default).
	Intensity float64
	// Logs, when set, gets the engine's log (a replay).
	Logs io.Writer
	// Steps keeps every gate's key in Result.Steps.
	Steps bool
	// Mutation breaks one of the engine's rules (mutation.go).
	Mutation string
	// Drop leaves out these fault windows of the seed's plan (by index):
	// how a failure is narrowed to the windows it needs.
	Drop []int
}

func (o Options) withDefaults() Options {
	if o.Duration == 0 {
		o.Duration = time.Hour
	}
	if o.Settle == 0 {
		o.Settle = 4 * time.Hour
	}
	return o
}

// Result is what a run found.
type Result struct {
	Seed uint64
	// Digest identifies the run event for event: a replay of the seed
	// has the same.
	Digest   string
	Problems []string
	// Residual are the false deletes no witness could have prevented
	// (docs/arm.md's residual risk): reported, not failed.
	Residual []string
	// Trace is the shortened trace of a failed run: the events about
	// the ids its problems name, and every fault and restart.
	Trace []string
	Cover *coverage
	Ops   int
	Steps []string
	// Windows are the fault windows the seed planned, described.
	Windows []string
	// Dropped are the windows a narrowed replay leaves out (Minimize).
	Dropped []int
}

// Failed reports whether the run broke a rule.
func (r Result) Failed() bool { return len(r.Problems) > 0 }

// Run runs seed in a synctest bubble of its own.
func Run(t *testing.T, seed uint64, opts Options) Result {
	var res Result
	synctest.Test(t, func(*testing.T) { res = run(seed, opts) })
	return res
}

func run(seed uint64, opts Options) Result {
	opts = opts.withDefaults()
	if err := checkMutation(opts.Mutation); err != nil {
		panic(err.Error())
	}
	w := newWorld(seed, opts)
	end := w.start.Add(opts.Duration)
	w.startInstance("a")
	// Every party's random stream is drawn here, in one order, before any
	// of them runs.
	cust := newCustomer(w)
	op, proc, feed, timer, arm := w.stream(), w.stream(), w.stream(), w.stream(), w.stream()
	w.spawn(func() { cust.run(end) })
	w.spawn(func() { w.operator(op, end) })
	w.spawn(func() { w.processes(proc, end) })
	w.spawn(func() { w.timer(timer) })
	w.spawn(func() { w.feed(feed) })
	w.spawn(func() { w.armPoller(arm) })
	w.sched.drive(end)
	w.faults.heal()
	w.trace.note("fault windows healed")
	w.spawn(func() { w.settled(end.Add(opts.Settle)) })
	w.sched.drive(end.Add(opts.Settle))
	w.finish()
	w.oracle.final(w)
	w.sim.Close()
	_ = w.mem.Close()
	return w.result()
}

func (w *world) spawn(f func()) {
	w.actors.Add(1)
	go func() {
		defer w.actors.Done()
		f()
	}()
}

// finish stops every actor and instance and lets what they had in flight
// fail, until nothing of the run is left running.
func (w *world) finish() {
	w.stop()
	done := make(chan struct{})
	go func() {
		w.actors.Wait()
		w.mu.Lock()
		var ins []*instance
		for _, in := range w.instances {
			ins = append(ins, in)
		}
		w.mu.Unlock()
		for _, in := range ins {
			in.work.Wait()
			_ = in.client.Close()
		}
		w.bg.Wait()
		close(done)
	}()
	for {
		synctest.Wait()
		if w.sched.next() {
			continue
		}
		select {
		case <-done:
			return
		case <-w.sched.arrived:
		}
	}
}

func (w *world) result() Result {
	res := Result{Seed: w.seed, Digest: w.trace.digest(), Cover: w.cover, Ops: len(w.oracle.ops), Steps: w.trace.every}
	for _, f := range w.faults.windows {
		res.Windows = append(res.Windows, f.String())
	}
	var ids []string
	for _, p := range w.oracle.problems {
		res.Problems = append(res.Problems, fmt.Sprintf("%s: %s", p.at.Sub(w.start).Truncate(time.Millisecond), p.what))
		ids = append(ids, p.ids...)
	}
	for _, p := range w.oracle.residual {
		res.Residual = append(res.Residual, fmt.Sprintf("%s: %s", p.at.Sub(w.start).Truncate(time.Millisecond), p.what))
	}
	if res.Failed() {
		res.Trace = w.trace.lines(ids...)
	}
	return res
}

// invoke runs one invocation of an instance within a budget, counted so
// a stopped instance's invocations can be waited for.
func (w *world) invoke(in *instance, name string, budget time.Duration, f func(context.Context) error) error {
	in.work.Add(1)
	defer in.work.Done()
	ctx, cancel := context.WithTimeout(withActor(in.ctx, in.name+" "+name), budget)
	defer cancel()
	return f(ctx)
}

// owner is the instance that holds the timer and the feed's lease: the
// first live one by name.
func (w *world) owner() *instance {
	w.mu.Lock()
	defer w.mu.Unlock()
	var names []string
	for n := range w.instances {
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return w.instances[names[0]]
}

// others are the live instances but the owner.
func (w *world) others() []*instance {
	own := w.owner()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*instance
	for _, in := range w.instances {
		if in != own {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b *instance) int { return compareStrings(a.name, b.name) })
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// timer is the poll timer: a tick every 10 s on the owner, never two at
// once, as the host's singleton timer runs it.
func (w *world) timer(rng *rand.Rand) {
	ctx := withActor(w.ctx, actorTimer)
	period := 10*time.Second + offset(rng)
	for {
		if !sleep(ctx, period) {
			return
		}
		w.sched.gate(ctx, "fires")
		in := w.owner()
		if in == nil {
			continue
		}
		_ = w.invoke(in, "tick", 50*time.Second, w.tick(in))
	}
}

func (w *world) tick(in *instance) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := in.engine.Tick(ctx)
		return err
	}
}

// feed is the change-feed trigger: batches from the lease's position to
// an instance (the owner, or a second one holding part of the leases),
// retried as the host's retry policy does, then skipped; now and then a
// batch is delivered twice, or the lease is reset to the beginning.
func (w *world) feed(rng *rand.Rand) {
	ctx := withActor(w.ctx, actorFeed)
	pos := ""
	for {
		if !sleep(ctx, time.Duration(1+rng.IntN(5))*time.Second+offset(rng)) {
			return
		}
		page, err := w.store.ChangeFeed(ctx, pos, 100)
		if err != nil {
			continue
		}
		if len(page.Items) == 0 {
			pos = page.Continuation
			continue
		}
		docs := make([]json.RawMessage, len(page.Items))
		for i, it := range page.Items {
			docs[i] = it.Body
		}
		w.deliver(ctx, rng, docs)
		pos = page.Continuation
		switch rng.IntN(40) {
		case 0:
			w.trace.note("feed: a batch delivered again")
			w.deliver(ctx, rng, docs)
		case 1:
			w.trace.note("feed: lease reset to the beginning")
			w.cover.add("feed lease reset", 1)
			pos = ""
		}
	}
}

// deliver hands one batch to an instance with the host's retry policy:
// five retries, 5 s doubling to 2 min, then the batch is skipped.
func (w *world) deliver(ctx context.Context, rng interface{ IntN(int) int }, docs []json.RawMessage) {
	backoff := 5 * time.Second
	for attempt := 0; ; attempt++ {
		in := w.owner()
		if others := w.others(); len(others) > 0 && rng.IntN(2) == 0 {
			in = others[0]
		}
		if in == nil {
			if !sleep(ctx, backoff) {
				return
			}
			continue
		}
		err := w.invoke(in, "dispatch", 5*time.Minute, func(ctx context.Context) error {
			_, err := in.engine.DispatchDocuments(ctx, docs)
			return err
		})
		if err == nil || attempt == 5 {
			if err != nil {
				w.cover.add("feed batch skipped after retries", 1)
			}
			return
		}
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, 2*time.Minute)
	}
}

// processes restarts the Function App now and then (everything in
// memory is lost) and runs a second instance for a while.
func (w *world) processes(rng *rand.Rand, end time.Time) {
	ctx := withActor(w.ctx, "processes")
	type event struct {
		at   time.Time
		what string
	}
	var events []event
	span := int64(time.Until(end))
	for range rng.IntN(3) {
		events = append(events, event{w.start.Add(time.Duration(rng.Int64N(span))), "restart"})
	}
	if rng.IntN(3) == 0 {
		from := rng.Int64N(span)
		events = append(events, event{w.start.Add(time.Duration(from)), "second"},
			event{w.start.Add(time.Duration(from + rng.Int64N(span-from+1))), "second-stop"})
	}
	slices.SortFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	n := 0
	for _, ev := range events {
		if !sleep(ctx, time.Until(ev.at)) {
			return
		}
		w.sched.gate(ctx, ev.what)
		switch ev.what {
		case "restart":
			own := w.owner()
			if own == nil {
				continue
			}
			n++
			w.cover.add("process restart", 1)
			w.stopInstance(own.name)
			w.startInstance(fmt.Sprintf("a%d", n))
		case "second":
			w.cover.add("second instance", 1)
			w.startInstance("b")
		case "second-stop":
			w.stopInstance("b")
		}
	}
}

// abandon is an operator's ops fail or cancel, as the CLI runs it.
func abandon(ctx context.Context, w *world, req lifecycle.AbandonRequest) (lifecycle.Abandoned, error) {
	return lifecycle.Abandon(ctx, lifecycle.AbandonDeps{Store: w.store, Notifier: w.notifier(), Clock: clock.Real{},
		Logger: slog.New(w.logs)}, w.cfg, req)
}

func abandonRequest(op *operation, status arm.ProvisioningState) lifecycle.AbandonRequest {
	return lifecycle.AbandonRequest{PartitionKey: op.pk, ID: op.id, Status: status, Reason: "the simulation's operator", By: "dst"}
}

// settled ends the run early once nothing is left to happen: every
// operation ended and ARM told, and nothing is landing in CS late.
func (w *world) settled(deadline time.Time) {
	ctx := withActor(w.ctx, "settle")
	for sleep(ctx, time.Minute) && time.Now().Before(deadline) {
		w.sched.gate(ctx, "looks")
		if w.oracle.quiet(w.sink) && w.bgIdle() {
			w.trace.note("settled: every operation ended and ARM told")
			w.sched.end()
			return
		}
	}
}

// offset is a period's drift below a millisecond: two timers due at one
// instant wake in no fixed order, and the ungated code each then runs
// could touch the same memory, so a run keeps its periods (the timer's,
// the feed's, ARM's) off the whole seconds its timeouts fall on.
func offset(rng *rand.Rand) time.Duration {
	return time.Duration(1 + rng.Int64N(int64(time.Millisecond)))
}
