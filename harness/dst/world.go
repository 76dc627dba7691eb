package dst

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/memory"
)

// Who works under a context: the parties of a run.
const (
	actorFrontend = "frontend"
	actorOperator = "operator"
	actorFeed     = "feed"
	actorTimer    = "timer"
)

// csURL is the base the clients name; every request is served in memory.
const csURL = "http://clusters-service.invalid"

// world is one run: the real engine (one or two instances of it, each
// with its own CS client) on the memory store and the simulator, the
// frontend, ARM's notification endpoint and an operator, all in one
// synctest bubble whose clock is the run's.
type world struct {
	seed  uint64
	opts  Options
	start time.Time
	ctx   context.Context
	stop  context.CancelFunc

	root   *rand.Rand
	trace  *trace
	sched  *sched
	faults *faults
	cover  *coverage
	oracle *oracle

	mem   *memory.Store
	store *gatedStore
	sim   *simulator.Simulator
	cs    *csNet
	sink  *sink
	cfg   lifecycle.Config
	ids   io.Reader
	logs  slog.Handler

	mu        sync.Mutex
	instances map[string]*instance
	bg        bgGroup // goroutines on CS's side (slow accepts)
	bgLive    atomic.Int64
	actors    sync.WaitGroup
}

// instance is one process of the Function App.
type instance struct {
	name   string
	engine *lifecycle.Engine
	client *ocm.Client
	ctx    context.Context
	cancel context.CancelFunc
	work   sync.WaitGroup // its invocations in flight
}

// stream is a random source of its own, drawn from the seed: each party
// draws from its own, so what one draws does not move another's.
func (w *world) stream() *rand.Rand { return rand.New(rand.NewPCG(w.root.Uint64(), w.root.Uint64())) }

func newWorld(seed uint64, opts Options) *world {
	w := &world{seed: seed, opts: opts, start: time.Now(), root: rand.New(rand.NewPCG(seed, 0x6863706f7073))}
	w.ctx, w.stop = context.WithCancel(context.Background())
	w.trace = newTrace(w.start)
	w.trace.keep = opts.Steps
	w.sched = newSched(w.stream(), w.trace)
	w.faults = planFaults(w.stream(), w.start, opts.Duration, opts.Intensity)
	for _, i := range opts.Drop {
		if i >= 0 && i < len(w.faults.windows) {
			w.faults.windows[i].kind = "dropped"
		}
	}
	if opts.Steps {
		w.faults.tr = w.trace
	}
	w.cover = newCoverage()
	var chacha [32]byte
	for i := range chacha {
		chacha[i] = byte(w.root.Uint32())
	}
	w.ids = &lockedReader{r: rand.NewChaCha8(chacha)}
	w.mem = memory.New(memory.WithClock(clock.Real{}))
	w.store = &gatedStore{w: w, next: w.mem}
	w.sim = simulator.New(simulator.WithClock(clock.Real{}), simulator.WithRandSource(rand.NewPCG(w.root.Uint64(), w.root.Uint64())),
		simulator.WithDurations(drawDurations(w.stream())))
	w.oracle = newOracle(w.sim, w.trace)
	w.oracle.mem = w.mem
	w.oracle.window = lifecycle.DefaultAbsenceWindow
	w.cs = newCSNet(w, w.sim)
	w.sink = newSink(w)
	w.cfg = drawConfig(w.stream())
	if opts.Mutation == MutantLone404 {
		w.cfg.AbsenceWindow = time.Nanosecond
	}
	w.logs = slog.DiscardHandler
	if opts.Logs != nil {
		w.logs = slog.NewJSONHandler(opts.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	w.logs = &watch{next: w.logs, w: w}
	w.instances = map[string]*instance{}
	for i, f := range w.faults.windows {
		w.trace.note("fault planned: #%d %s", i, f)
	}
	return w
}

// lockedReader makes a seeded reader safe for the engine's concurrent use.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// drawDurations are CS's phases for a run: seconds to minutes each.
func drawDurations(rng *rand.Rand) simulator.Durations {
	d := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Second }
	return simulator.Durations{
		ClusterValidating: d(5, 60), ClusterPending: d(5, 60), ClusterInstalling: d(30, 600), ClusterUpdating: d(10, 300),
		ClusterUninstalling: d(10, 900),
		NodePoolValidating:  d(5, 60), NodePoolPending: d(5, 60), NodePoolInstalling: d(30, 600), NodePoolUpdating: d(10, 300),
		NodePoolUninstalling: d(10, 600), ExternalAuthUninstalling: d(5, 120),
		CredentialIssuing: d(5, 60), CredentialRevoking: d(5, 120), CredentialExpiry: 24 * time.Hour,
		ControlPlaneUpgradeScheduled: d(5, 120), ControlPlaneUpgrading: d(30, 1200),
		NodePoolUpgradeScheduled: d(5, 120), NodePoolUpgrading: d(30, 1200),
	}
}

// drawConfig is the engine's configuration for a run: the defaults, with
// deadlines short enough to be met within a run now and then, and
// batching, paging and concurrency varied.
func drawConfig(rng *rand.Rand) lifecycle.Config {
	m := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Minute }
	return lifecycle.Config{
		PollConcurrency: []int{1, 2, 4, 8}[rng.IntN(4)],
		PageSize:        []int{2, 5, 100}[rng.IntN(3)],
		CSBatchSize:     []int{1, 3, 100}[rng.IntN(3)],
		CreateDeadline:  m(20, 90),
		DeleteDeadline:  m(30, 180),
		UpgradeDeadline: m(20, 120),
		RelistInterval:  m(2, 30),
	}
}

// startInstance starts a process of the Function App: an engine and a
// CS client of its own, nothing else kept from an earlier one.
func (w *world) startInstance(name string) *instance {
	ctx, cancel := context.WithCancel(w.ctx)
	in := &instance{name: name, ctx: ctx, cancel: cancel}
	rec := clusterservice.NewRecorder(clock.Real{}, nil)
	client, err := ocm.New(ctx, ocm.Config{URL: csURL, RetryLimit: 2, RetryInterval: time.Second, NoRetryJitter: true,
		Timeout: 10 * time.Second, Recorder: rec, Transport: w.cs}, nil)
	if err != nil {
		panic("dst: the CS client: " + err.Error())
	}
	eng, err := lifecycle.New(lifecycle.Deps{Store: w.store, ClusterService: client, Calls: rec, Notifier: w.notifier(),
		Clock: clock.Real{}, Logger: slog.New(w.logs).With("instance", name), Random: w.ids}, w.cfg)
	if err != nil {
		panic("dst: the engine: " + err.Error())
	}
	in.engine, in.client = eng, client
	w.mu.Lock()
	w.instances[name] = in
	w.mu.Unlock()
	w.trace.note("instance %s started", name)
	return in
}

// stopInstance ends a process where it stands: its invocations' calls
// fail with its context, and nothing it kept in memory survives.
func (w *world) stopInstance(name string) {
	w.mu.Lock()
	in := w.instances[name]
	delete(w.instances, name)
	w.mu.Unlock()
	if in == nil {
		return
	}
	in.cancel()
	w.trace.note("instance %s stopped", name)
	go func() { // its invocations finish failing on their own
		in.work.Wait()
		_ = in.client.Close()
	}()
}

// notifier is the production notifier, reaching ARM's endpoint in memory.
func (w *world) notifier() *notification.Notifier {
	const timeout = 5 * time.Second
	return notification.New(notification.Config{AllowLoopback: true, Timeout: timeout}, &http.Client{
		Transport:     w.sink,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	})
}

// watch is the engine's log handler: it passes records on and shows the
// run the ones it judges by (an operation reported stuck).
type watch struct {
	next  slog.Handler
	w     *world
	attrs []slog.Attr
}

func (h *watch) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *watch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == lifecycle.MsgStuck || r.Message == lifecycle.MsgAnomaly {
		id := ""
		find := func(a slog.Attr) bool {
			if a.Key == "operation_id" {
				id = a.Value.String()
			}
			return true
		}
		for _, a := range h.attrs {
			find(a)
		}
		r.Attrs(find)
		h.w.trace.note("%s %s", r.Message, id)
		if r.Message == lifecycle.MsgStuck {
			h.w.oracle.reportedStuck(id)
		}
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *watch) WithAttrs(as []slog.Attr) slog.Handler {
	return &watch{next: h.next.WithAttrs(as), w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *watch) WithGroup(g string) slog.Handler {
	return &watch{next: h.next.WithGroup(g), w: h.w, attrs: h.attrs}
}

// bgIdle: no slow POST is still on its way into CS.
func (w *world) bgIdle() bool { return w.bgLive.Load() == 0 }
