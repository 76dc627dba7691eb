package triggerhost

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/testsupport"
)

const leaseName = "dispatch"

func writeLease(t *testing.T, dir string, l Lease) {
	t.Helper()
	l.Name = leaseName
	if _, err := (fileLeases{dir: stateDir(dir)}).Save(context.Background(), l); err != nil {
		t.Fatal(err)
	}
}

func readLease(t *testing.T, dir string) Lease {
	t.Helper()
	l, found, err := (fileLeases{dir: stateDir(dir)}).Load(context.Background(), leaseName)
	if err != nil || !found {
		t.Fatalf("lease %s: found %v, %v", leaseName, found, err)
	}
	return l
}

// runHost runs a host until stop, which returns Run's error.
func runHost(t *testing.T, cfg Config) (h *Host, stop func() error, done <-chan error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	h, err := New(cfg)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- h.Run(ctx) }()
	stopped := false
	stop = func() error {
		if !stopped {
			cancel()
			stopped = true
		}
		select {
		case err := <-ch:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("host did not stop within 10s")
			return nil
		}
	}
	return h, stop, ch
}

// leaseRig is a store, a handler and an app with one change-feed
// function, for the lease tests.
type leaseRig struct {
	dir    string
	s      *embedded.Store
	th     *testHandler
	app    *functionapp.App
	leases *watchedLeases
}

func newLeaseRig(t *testing.T) *leaseRig {
	dir := t.TempDir()
	s := openStore(t, dir)
	t.Cleanup(func() { s.Close() })
	return &leaseRig{dir: dir, s: s, th: newTestHandler(), leases: watchLeases(dir),
		app: writeApp(t, hostJSON, map[string]string{"dispatch": feedFunction("")})}
}

// config is the host of the rig, owned by "me".
func (r *leaseRig) config() Config {
	return Config{App: r.app, Worker: r.th.worker(), StateDir: r.dir, Leases: r.leases, Feed: r.s, Owner: "me"}
}

// with is config with extra's leases, clock and logger.
func (r *leaseRig) with(extra Config) Config {
	c := r.config()
	if extra.Leases != nil {
		c.Leases = extra.Leases
	}
	c.Clock, c.Logger = extra.Clock, extra.Logger
	return c
}

func TestFeedLeaseHeldByAnotherHostIsRefused(t *testing.T) {
	r := newLeaseRig(t)
	writeLease(t, r.dir, Lease{Owner: "hcpopsctl dev on laptop-2 (/src/.data)", Renewed: time.Now().Add(-10 * time.Second)})
	_, _, done := runHost(t, r.config())
	err := <-done
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), "hcpopsctl dev on laptop-2 (/src/.data), renewed 10s ago") ||
		!strings.Contains(err.Error(), "wait 50s") {
		t.Fatalf("Run = %v, want ErrLeaseHeld naming the holder, how long ago it renewed and when it expires", err)
	}
	if l := readLease(t, r.dir); l.Owner != "hcpopsctl dev on laptop-2 (/src/.data)" {
		t.Errorf("the refused host wrote the lease: %+v", l)
	}
}

// TestFeedTakesOverAnExpiredLease: a lease nobody renewed for longer than
// the expiration interval (a crashed host) is taken, at its position; the
// same owner takes its own lease back at once.
func TestFeedTakesOverAnExpiredLease(t *testing.T) {
	for _, tc := range []struct {
		name, owner string
		renewed     time.Duration
	}{
		{"another owner, expired", "crashed host", -2 * time.Minute},
		{"this owner, just now", "me", -time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLeaseRig(t)
			createDocs(t, r.s, "done-before")
			end, err := r.s.ChangeFeed(context.Background(), "", 100)
			must(t, err)
			writeLease(t, r.dir, Lease{Continuation: end.Continuation, Owner: tc.owner, Renewed: time.Now().Add(tc.renewed)})
			createDocs(t, r.s, "missed-while-down")
			startHost(t, r.config())
			if got := batchIDs(t, r.th.next(t)); !slices.Equal(got, []string{"missed-while-down"}) {
				t.Fatalf("delivered %v, want [missed-while-down] (from the lease's position)", got)
			}
			if l := readLease(t, r.dir); l.Owner != "me" {
				t.Errorf("lease owner = %q, want me", l.Owner)
			}
		})
	}
}

func TestFeedReleasesItsLeaseOnStop(t *testing.T) {
	r := newLeaseRig(t)
	h, stop, _ := runHost(t, r.config())
	<-h.Started()
	if l := readLease(t, r.dir); l.Owner != "me" {
		t.Fatalf("running host's lease owner = %q, want me", l.Owner)
	}
	must(t, stop())
	if l := readLease(t, r.dir); l.Owner != "" {
		t.Errorf("lease after a clean stop is owned by %q, want released", l.Owner)
	}
}

// TestFeedGapStartsAgainFromTheBindingStart: a lease position the store
// refuses (another store's) is logged and replaced by the binding's start;
// delivery goes on.
func TestFeedGapStartsAgainFromTheBindingStart(t *testing.T) {
	r := newLeaseRig(t)
	writeLease(t, r.dir, Lease{Continuation: "987654321", Renewed: time.Now()})
	var logs testsupport.Records
	startHost(t, r.with(Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	waitLease(t, r.leases, leaseName, func(l Lease) bool { return l.Continuation != "987654321" })
	createDocs(t, r.s, "after-the-gap")
	if got := batchIDs(t, r.th.next(t)); !slices.Equal(got, []string{"after-the-gap"}) {
		t.Fatalf("delivered %v, want [after-the-gap]", got)
	}
	gap := logs.Wait(t, "change feed lease position refused; starting again from the binding's start")
	testsupport.WantAttrs(t, gap, map[string]any{"level": "ERROR", "function": "dispatch", "lease": leaseName, "start": "now"})
}

// losingLeases is the state r.dir's store, except that a Save after the
// first few finds the lease taken by another host.
type losingLeases struct {
	fileLeases
	saves, keep atomic.Int32
}

func (l *losingLeases) Save(ctx context.Context, ls Lease) (Lease, error) {
	if l.saves.Add(1) > l.keep.Load() {
		return ls, ErrLeaseLost
	}
	return l.fileLeases.Save(ctx, ls)
}

func TestFeedStopsWhenItsLeaseIsTaken(t *testing.T) {
	r := newLeaseRig(t)
	leases := &losingLeases{fileLeases: fileLeases{dir: stateDir(r.dir)}}
	leases.keep.Store(1) // the first start's lease only
	h, _, done := runHost(t, r.with(Config{Leases: leases}))
	<-h.Started()
	createDocs(t, r.s, "a")
	r.th.next(t)
	if err := <-done; !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "lease dispatch") {
		t.Fatalf("Run = %v, want ErrLeaseLost naming the lease", err)
	}
}

// TestFeedRenewsAnIdleLease: with nothing to deliver the listener still
// rewrites its lease every renew interval, so no other host takes it.
func TestFeedRenewsAnIdleLease(t *testing.T) {
	r := newLeaseRig(t)
	clock := newFakeClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	startHost(t, r.with(Config{Clock: clock}))
	first := readLease(t, r.dir).Renewed
	for clock.Now().Sub(first) < DefaultLeaseRenewInterval {
		clock.Set(clock.AwaitWaiter(t))
	}
	clock.AwaitWaiter(t) // the read after the interval has renewed, and sleeps again
	if l := readLease(t, r.dir); !l.Renewed.After(first) || l.Owner != "me" {
		t.Errorf("lease after %s idle = %+v, want renewed after %s", DefaultLeaseRenewInterval, l, first)
	}
	r.th.noneQueued(t)
}

// versionedLeases checks ETags as the leases container does. Armed with
// stop, the next Save is applied and then stops the host before it
// returns: a stop that lands while a checkpoint is on the wire.
type versionedLeases struct {
	mu     sync.Mutex
	stored map[string]Lease
	writes int
	stop   func()
}

func (v *versionedLeases) Load(_ context.Context, name string) (Lease, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, ok := v.stored[name]
	l.Name = name
	return l, ok, nil
}

func (v *versionedLeases) Save(ctx context.Context, l Lease) (Lease, error) {
	v.mu.Lock()
	if cur, ok := v.stored[l.Name]; ok && cur.ETag != l.ETag {
		v.mu.Unlock()
		return l, ErrLeaseLost
	}
	v.writes++
	l.ETag = strconv.Itoa(v.writes)
	v.stored[l.Name] = l
	stop := v.stop
	v.stop = nil
	v.mu.Unlock()
	if stop != nil {
		stop()
		if err := ctx.Err(); err != nil {
			return Lease{}, err // written, but the caller never hears so
		}
	}
	return l, nil
}

// TestFeedReleasesItsLeaseWhenStoppedMidCheckpoint: a stop that cancels
// a checkpoint already written must not leave the lease owned (seen once
// as a flaky end-to-end run on Cosmos DB, where leases are ETag-guarded).
func TestFeedReleasesItsLeaseWhenStoppedMidCheckpoint(t *testing.T) {
	r := newLeaseRig(t)
	leases := &versionedLeases{stored: map[string]Lease{}}
	h, err := New(r.with(Config{Leases: leases, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}))
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	<-h.Started()
	leases.mu.Lock()
	leases.stop = cancel
	leases.mu.Unlock()
	createDocs(t, r.s, "a")
	r.th.next(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("host did not stop within 10s")
	}
	l, _, _ := leases.Load(context.Background(), leaseName)
	if l.Owner != "" || l.Continuation == "" {
		t.Errorf("lease after a stop mid-checkpoint = %+v, want released with its position", l)
	}
}
