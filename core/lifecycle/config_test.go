package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	mathrand "math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/logging"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    func(*Config)
		wantErr string
	}{
		{name: "defaults", env: nil, want: func(*Config) {}},
		{name: "every setting", env: map[string]string{
			EnvPollConcurrency: "8", EnvDispatchGrace: "90s", EnvCreateDeadline: "2h", EnvDeleteDeadline: "24h",
			EnvNotifyBackoffBase: "1s", EnvNotifyBackoffMax: "5m",
		}, want: func(c *Config) {
			c.PollConcurrency, c.DispatchGrace, c.CreateDeadline, c.DeleteDeadline = 8, 90*time.Second, 2*time.Hour, 24*time.Hour
			c.NotifyBackoffBase, c.NotifyBackoffMax = time.Second, 5*time.Minute
		}},
		{name: "the two graces are separate", env: map[string]string{EnvDispatchGrace: "2m", EnvPendingIDGrace: "5s"},
			want: func(c *Config) { c.DispatchGrace, c.PendingIDGrace = 2*time.Minute, 5*time.Second }},
		{name: "pending grace zero", env: map[string]string{EnvPendingIDGrace: "0s"}, wantErr: `HCPOPS_PENDING_ID_GRACE="0s"`},
		{name: "concurrency not a number", env: map[string]string{EnvPollConcurrency: "many"}, wantErr: `HCPOPS_POLL_CONCURRENCY="many"`},
		{name: "concurrency zero", env: map[string]string{EnvPollConcurrency: "0"}, wantErr: `HCPOPS_POLL_CONCURRENCY="0"`},
		{name: "duration without unit", env: map[string]string{EnvDispatchGrace: "60"}, wantErr: `HCPOPS_DISPATCH_GRACE="60"`},
		{name: "negative deadline", env: map[string]string{EnvCreateDeadline: "-1h"}, wantErr: `HCPOPS_CREATE_DEADLINE="-1h"`},
		{name: "max below base", env: map[string]string{EnvNotifyBackoffMax: "1s"}, wantErr: "NotifyBackoffMax"},
		{name: "poll backoff cap", env: map[string]string{EnvPollBackoffMax: "2m"}, want: func(c *Config) { c.PollBackoffMax = 2 * time.Minute }},
		{name: "poll backoff cap below the base", env: map[string]string{EnvPollBackoffMax: "4s"}, want: func(c *Config) {
			c.PollBackoffBase, c.PollBackoffMax = 4*time.Second, 4*time.Second
		}},
		{name: "poll backoff cap not a duration", env: map[string]string{EnvPollBackoffMax: "soon"}, wantErr: `HCPOPS_POLL_BACKOFF_MAX="soon"`},
		{name: "batch size", env: map[string]string{EnvCSBatchSize: "50"}, want: func(c *Config) { c.CSBatchSize = 50 }},
		{name: "batching off", env: map[string]string{EnvCSBatchSize: " 1 "}, want: func(c *Config) { c.CSBatchSize = 1 }},
		{name: "batch size zero", env: map[string]string{EnvCSBatchSize: "0"}, wantErr: `HCPOPS_CS_BATCH_SIZE="0": want an integer from 1 to 200`},
		{name: "batch size too big", env: map[string]string{EnvCSBatchSize: "1000"}, wantErr: `HCPOPS_CS_BATCH_SIZE="1000"`},
		{name: "batch size not a number", env: map[string]string{EnvCSBatchSize: "lots"}, wantErr: `HCPOPS_CS_BATCH_SIZE="lots"`},
		{name: "relist interval", env: map[string]string{EnvRelistInterval: "10m"}, want: func(c *Config) { c.RelistInterval = 10 * time.Minute }},
		{name: "relist interval zero", env: map[string]string{EnvRelistInterval: "0s"}, wantErr: `HCPOPS_RELIST_INTERVAL="0s": want a positive duration`},
		{name: "relist interval without unit", env: map[string]string{EnvRelistInterval: "30"}, wantErr: `HCPOPS_RELIST_INTERVAL="30"`},
		{name: "absence window", env: map[string]string{EnvAbsenceWindow: "20m"}, want: func(c *Config) { c.AbsenceWindow = 20 * time.Minute }},
		{name: "absence window zero", env: map[string]string{EnvAbsenceWindow: "0s"}, wantErr: `HCPOPS_ABSENCE_WINDOW="0s": want a positive duration`},
		{name: "absence window without unit", env: map[string]string{EnvAbsenceWindow: "10"}, wantErr: `HCPOPS_ABSENCE_WINDOW="10"`},
		{name: "version sweep off", env: map[string]string{EnvVersionSweep: "off"}, want: func(c *Config) { c.SweepVersions = false }},
		{name: "version sweep garbled", env: map[string]string{EnvVersionSweep: "no"}, wantErr: `HCPOPS_VERSION_SWEEP="no": want on or off`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultConfig()
			want.SweepVersions = true // ConfigFromEnv's, not the zero Config's
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config = %+v, want %+v", got, want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	want := Config{
		PollConcurrency: 32, DispatchGrace: time.Minute, PendingIDGrace: time.Minute, CreateDeadline: time.Hour,
		DeleteDeadline: 12 * time.Hour, UpgradeDeadline: 4 * time.Hour, NotifyBackoffBase: 15 * time.Second, NotifyBackoffMax: 15 * time.Minute,
		NotifyScheduleSize: 10000, PageSize: 100, PollBackoffBase: 10 * time.Second, PollBackoffMax: 5 * time.Minute,
		WriteTimeout: 10 * time.Second, CSBatchSize: 100, StuckAfter: DefaultStuckAfter(),
		RelistInterval: 30 * time.Minute, AbsenceWindow: 10 * time.Minute,
		VersionSweepInterval: 10 * time.Minute, VersionSweepPageSize: 100,
	}
	if got := DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("DefaultConfig() = %+v\nwant %+v", got, want)
	}
	tests := []struct {
		name string
		in   Config
		want func(*Config)
	}{
		{"zero is the defaults", Config{}, func(*Config) {}},
		{"set fields are kept", Config{PageSize: 7, WriteTimeout: time.Second, DispatchGrace: time.Hour},
			func(c *Config) { c.PageSize, c.WriteTimeout, c.DispatchGrace = 7, time.Second, time.Hour }},
		{"a base above the default cap raises the cap", Config{PollBackoffBase: time.Hour},
			func(c *Config) { c.PollBackoffBase, c.PollBackoffMax = time.Hour, time.Hour }},
		{"a cap below the default base lowers the base", Config{PollBackoffMax: time.Second},
			func(c *Config) { c.PollBackoffBase, c.PollBackoffMax = time.Second, time.Second }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := want
			tc.want(&w)
			if got := tc.in.withDefaults(); !reflect.DeepEqual(got, w) {
				t.Errorf("withDefaults() = %+v\nwant %+v", got, w)
			}
		})
	}
	for _, bad := range []struct {
		cfg  Config
		name string
	}{
		{Config{PollConcurrency: -1}, "PollConcurrency"},
		{Config{PageSize: -1}, "PageSize"},
		{Config{WriteTimeout: -time.Second}, "WriteTimeout"},
		{Config{NotifyBackoffBase: time.Hour}, "NotifyBackoffMax"},
	} {
		if err := bad.cfg.withDefaults().validate(); err == nil || !strings.Contains(err.Error(), bad.name) {
			t.Errorf("%+v: validate = %v, want an error naming %s", bad.cfg, err, bad.name)
		}
	}
}

type nopNotifier struct{}

func (nopNotifier) Notify(context.Context, string, arm.OperationStatus) error { return nil }

func TestNewRefusesIncompleteDeps(t *testing.T) {
	e := newEnv(t)
	full := Deps{Store: e.store, ClusterService: e.cs, Calls: e.calls, Notifier: nopNotifier{}, Clock: clock.Real{}}
	tests := []struct {
		name    string
		deps    func(Deps) Deps
		cfg     Config
		wantErr string
	}{
		{"no store", func(d Deps) Deps { d.Store = nil; return d }, Config{}, "Store"},
		{"no recorder", func(d Deps) Deps { d.Calls = nil; return d }, Config{}, "Calls required"},
		{"nothing", func(Deps) Deps { return Deps{} }, Config{}, "Store, ClusterService, Calls, Notifier, Clock required"},
		{"negative concurrency", func(d Deps) Deps { return d }, Config{PollConcurrency: -1}, "PollConcurrency: -1"},
		{"negative grace", func(d Deps) Deps { return d }, Config{DispatchGrace: -time.Second}, "DispatchGrace"},
		{"batch size above the cap", func(d Deps) Deps { return d }, Config{CSBatchSize: MaxCSBatchSize + 1}, "CSBatchSize: 201 is above 200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.deps(full), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
	eng, err := New(full, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(eng.cfg, DefaultConfig()) {
		t.Errorf("zero config became %+v, want the defaults", eng.cfg)
	}
}

// ref names a test document by id.
func ref(id string) store.DocRef { return store.DocRef{PartitionKey: "pk", ID: id} }

func TestBackoffSchedule(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBackoff(10*time.Second, time.Minute, 2)
	a := ref("a")
	if !b.due(a, t0) {
		t.Fatal("an unknown key must be due")
	}
	var delays []time.Duration
	now := t0
	for range 5 {
		next := b.failed(a, now)
		delays = append(delays, next.Sub(now))
		if b.due(a, next.Add(-time.Nanosecond)) || !b.due(a, next) {
			t.Fatalf("due around %s is wrong", next)
		}
		now = next
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("delays = %v, want %v", delays, want)
			break
		}
	}
	b.failed(ref("b"), now)
	b.failed(a, now)        // a failed again after b
	b.failed(ref("c"), now) // full: the one that failed longest ago (b) makes room
	if b.size() != 2 {
		t.Errorf("size = %d, want the bound 2", b.size())
	}
	if _, ok := b.lookup(ref("b")); ok {
		t.Error("b, which failed longest ago, was kept")
	}
	if b.attempt(a) != 7 {
		t.Errorf("a's next attempt is %d, want 7: its schedule was lost", b.attempt(a))
	}
	b.forget(ref("c"))
	if !b.due(ref("c"), t0) {
		t.Errorf("a forgotten key must be due")
	}
	// Emptied, it answers without its lock, and fills again.
	b.forget(a)
	if _, ok := b.lookup(a); ok || b.size() != 0 || b.n.Load() != 0 {
		t.Errorf("after forgetting every key: lookup %t, size %d, n %d", ok, b.size(), b.n.Load())
	}
	b.failed(a, now)
	if _, ok := b.lookup(a); !ok || b.attempt(a) != 2 {
		t.Errorf("a key failed after the schedule emptied: lookup %t, attempt %d; want found, 2", ok, b.attempt(a))
	}
}

func TestKeyedLock(t *testing.T) {
	k := newKeyedLock()
	unlock, err := k.lock(context.Background(), ref("a"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := k.lock(context.Background(), ref("b")) // another key is independent
	if err != nil {
		t.Fatal(err)
	}
	other()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := k.lock(ctx, ref("a")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock of a held key: err = %v, want it to wait until ctx ends", err)
	}
	unlock()
	unlock() // idempotent
	again, err := k.lock(context.Background(), ref("a"))
	if err != nil {
		t.Fatal(err)
	}
	again()
	if k.size() != 0 {
		t.Errorf("%d entries left, want none", k.size())
	}
}

func TestClusterIDShape(t *testing.T) {
	id, err := newClusterID(bytes.NewReader(bytes.Repeat([]byte{0xff, 0x00, 0x7a}, 20)))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-v]{32}$`).MatchString(id) {
		t.Errorf("id %q is not 32 characters of [0-9a-v]", id)
	}
	if _, err := newClusterID(bytes.NewReader(nil)); !errors.Is(err, io.EOF) {
		t.Errorf("an exhausted source: err = %v, want EOF", err)
	}
}

// TestLogLinesIdentifyTheOperation: every line about an operation names
// it, its resource, its request and the invocation.
func TestLogLinesIdentifyTheOperation(t *testing.T) {
	e := newEnv(t)
	var buf syncBuffer
	// The process's handler, which reads the invocation id from each
	// record's context: the lifecycle has no id of its own to add.
	e.engine.log = slog.New(logging.Handler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	name := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	ctx := logging.WithInvocationID(context.Background(), "inv-42")
	if _, err := e.engine.DispatchDocuments(ctx, e.feed(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("only %d log lines", len(lines))
	}
	for _, l := range lines {
		for _, want := range []string{`"operation_id":"` + name + `"`, `"resource_id":"` + clusterRID("c1") + `"`, `"request":"Create"`, `"invocation_id":"inv-42"`} {
			if !strings.Contains(l, want) {
				t.Errorf("line %s lacks %s", l, want)
			}
		}
	}
}

// TestMalformedOperationsAreSkippedNotRetried: a document the engine can
// never act on must not make the host redeliver the batch forever.
func TestMalformedOperationsAreSkippedNotRetried(t *testing.T) {
	e := newEnv(t)
	// An operation whose target is not one of ours.
	op, _ := e.newOp(t, document.RequestCreate, clusterRID("c1"), "", request{})
	op.Properties.ExternalID = "/subscriptions/" + testSub + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm"
	body, err := op.MarshalCreate()
	if err != nil {
		t.Fatal(err)
	}
	e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}})
	res, err := e.deliver(t)
	if err != nil || res.Skipped != 1 {
		t.Fatalf("dispatch = %+v, %v; want the operation skipped without an error", res, err)
	}
	if tr := e.tick(t); tr.Errors != 1 || tr.Changed != 0 {
		t.Errorf("tick = %+v, want it counted as an error and left alone", tr)
	}
}

// ConfigFromEnv asks for exactly the engine's documented settings: a
// table row without one must not read the empty name.
func TestConfigFromEnvReadsOnlyItsSettings(t *testing.T) {
	asked := map[string]bool{}
	if _, err := ConfigFromEnv(func(k string) string { asked[k] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{EnvPollConcurrency: true, EnvDispatchGrace: true, EnvPendingIDGrace: true,
		EnvCreateDeadline: true, EnvDeleteDeadline: true, EnvUpgradeDeadline: true, EnvNotifyBackoffBase: true,
		EnvNotifyBackoffMax: true, EnvPollBackoffMax: true, EnvCSBatchSize: true, EnvStuckAfter: true, EnvRelistInterval: true,
		EnvAbsenceWindow: true, EnvVersionSweep: true}
	if !maps.Equal(asked, want) {
		t.Errorf("ConfigFromEnv asked for %v, want %v", asked, want)
	}
}

// The relist jitter is drawn from Deps.Random, so a seeded reader replays
// it (the deterministic simulation relies on it), within ARO-HCP's 30%.
func TestJitterFromRandom(t *testing.T) {
	seeded := func() func(time.Duration) time.Duration {
		return jitterFrom(mathrand.NewChaCha8([32]byte{7}))
	}
	a, b := seeded(), seeded()
	d := 10 * time.Minute
	varied := false
	first := a(d)
	for i := range 50 {
		x, y := first, b(d)
		if i > 0 {
			x = a(d)
		}
		if x != y {
			t.Fatalf("draw %d: %s and %s from the same seed", i, x, y)
		}
		if x < 0 || x > d*3/10 {
			t.Fatalf("draw %d: jitter %s outside 0..%s", i, x, d*3/10)
		}
		varied = varied || x != first
	}
	if !varied {
		t.Fatal("50 draws gave the same jitter")
	}
	if got := jitterFrom(strings.NewReader(""))(d); got != 0 {
		t.Fatalf("an exhausted reader gave jitter %s, want none", got)
	}
}
