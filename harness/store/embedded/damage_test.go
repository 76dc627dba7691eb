package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
)

// seedFile writes a store file with n operations (ttl 60 s, so the sweeper
// has work once the clock moves) and closes it; it returns the path.
func seedFile(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := Open(path, WithClock(newFakeClock()), WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 400)
	// In batches of the most a batch takes: a commit per document made
	// this the slowest part of the damage tests.
	ops := make([]store.BatchOp, 0, store.MaxBatchOps)
	for i := range n {
		body := strings.Replace(string(opBody(fmt.Sprintf("op-%05d", i), "Accepted")), `"ttl":604800`, `"ttl":60,"pad":"`+pad+`"`, 1)
		ops = append(ops, store.BatchOp{Kind: store.OpCreate, Body: []byte(body)})
		if len(ops) == cap(ops) || i == n-1 {
			if _, err := s.Batch(context.Background(), pk, ops); err != nil {
				t.Fatalf("seeding: %v", err)
			}
			ops = ops[:0]
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func truncate(t testing.TB, path string, size func(int64) int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size(fi.Size())); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesDamagedFiles: a file cut short (0 bytes, 8 KiB, half) are refused at Open with an error naming the file and what to do,
// never a panic, and the file is left as it was.
func TestOpenRefusesDamagedFiles(t *testing.T) {
	tests := []struct {
		name string
		size func(int64) int64
		want string
	}{
		{"zero bytes", func(int64) int64 { return 0 }, "empty (0 bytes)"},
		{"8 KiB", func(int64) int64 { return 8 << 10 }, ""},
		{"half", func(n int64) int64 { return n / 2 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := seedFile(t, 2000)
			truncate(t, path, tt.size)
			before, _ := os.ReadFile(path)
			s, err := Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a damaged file")
			}
			msg := err.Error()
			if !errors.Is(err, ErrDamaged) || !strings.Contains(msg, path) || !strings.Contains(msg, "move it away") || !strings.Contains(msg, tt.want) {
				t.Fatalf("Open error %q: want ErrDamaged naming %s, the cause and what to do", msg, path)
			}
			t.Logf("refused: %v", err)
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatal("Open changed the damaged file")
			}
		})
	}
}

// TestOpenCreatesOnlyWhereNoFileExists: a missing file is a fresh store; a
// healthy file reopens with its documents.
func TestOpenCreatesOnlyWhereNoFileExists(t *testing.T) {
	path := seedFile(t, 3)
	s, err := Open(path, WithClock(newFakeClock()))
	if err != nil {
		t.Fatalf("reopening a healthy file: %v", err)
	}
	defer s.Close()
	if _, err := s.Get(context.Background(), pk, "op-00002"); err != nil {
		t.Fatalf("document lost on reopen: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "dir"), WithVerifyTimeout(0)); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("verify timeout 0: %v, want ErrInvalid", err)
	}
}

// damageSizes are where a damaged file ends, as functions of its size.
var damageSizes = []struct {
	name string
	size func(int64) int64
}{
	{"zero bytes", func(int64) int64 { return 0 }},
	{"8 KiB", func(int64) int64 { return 8 << 10 }},
	{"half", func(n int64) int64 { return n / 2 }},
}

// TestDamageWhileOpenIsAnError: a file damaged under a running store costs
// the call that meets it an error naming the file, logged once, and never
// a panic; every later call fails the same way without touching the file.
// Each kind of call is tried as the first to meet the damage.
func TestDamageWhileOpenIsAnError(t *testing.T) {
	ctx := context.Background()
	firsts := map[string]func(s *Store, clock *fakeClock) error{
		"query": func(s *Store, _ *fakeClock) error {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{}, func([]store.Item) error { return nil })
		},
		"change feed": func(s *Store, _ *fakeClock) error { _, err := s.ChangeFeed(ctx, "", 5000); return err },
		"point read":  func(s *Store, _ *fakeClock) error { _, err := s.Get(ctx, pk, "op-01999"); return err },
		"read many": func(s *Store, _ *fakeClock) error {
			_, err := s.ReadMany(ctx, []store.DocRef{{PartitionKey: pk, ID: "op-00000"}, {PartitionKey: pk, ID: "op-01999"}})
			return err
		},
		"write": func(s *Store, _ *fakeClock) error {
			_, err := s.Create(ctx, pk, opBody("op-01999x", "Accepted"))
			return err
		},
		"sweep": func(s *Store, clock *fakeClock) error {
			clock.Advance(2 * time.Minute)
			_, err := s.sweep(ctx)
			return err
		},
	}
	for _, size := range damageSizes {
		for name, first := range firsts {
			t.Run(size.name+"/"+name, func(t *testing.T) {
				path := seedFile(t, 2000)
				var logs bytes.Buffer
				clock := newFakeClock()
				s, err := Open(path, WithClock(clock), WithSweepInterval(time.Hour), WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				truncate(t, path, size.size)
				if err := first(s, clock); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
					t.Fatalf("%s after damage: %v, want ErrDamaged naming the file", name, err)
				}
				if _, err := s.Create(ctx, pk, opBody("after-damage", "Accepted")); !errors.Is(err, ErrDamaged) {
					t.Errorf("Create after damage: %v, want ErrDamaged", err)
				}
				select {
				case <-s.Damaged():
				default:
					t.Error("Damaged() not closed after damage was met")
				}
				if n := strings.Count(logs.String(), `"msg":"embedded store damaged"`); n != 1 {
					t.Errorf("damage logged %d times, want once:\n%s", n, logs.String())
				}
				if err := s.Close(); !errors.Is(err, ErrDamaged) {
					t.Errorf("Close of a damaged store: %v, want ErrDamaged", err)
				}
			})
		}
	}
}

// TestSweeperMeetsDamage: when the TTL sweeper is the first to meet the
// damage (about 10 s after start, when it first runs), it stops with the error
// recorded and logged once instead of panicking the process.
func TestSweeperMeetsDamage(t *testing.T) {
	for _, size := range damageSizes {
		t.Run(size.name, func(t *testing.T) { sweeperMeetsDamage(t, size.size) })
	}
}

func sweeperMeetsDamage(t *testing.T, size func(int64) int64) {
	path := seedFile(t, 2000)
	var logs syncBuffer
	clock := newFakeClock()
	s, err := Open(path, WithClock(clock), WithSweepInterval(10*time.Millisecond), WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	truncate(t, path, size)
	clock.Advance(2 * time.Minute) // every document is due for sweeping
	select {
	case <-s.Damaged():
	case <-time.After(30 * time.Second):
		t.Fatal("the sweeper never reported the damage")
	}
	if err := s.Err(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Err() = %v, want ErrDamaged naming the file", err)
	}
	if err := s.Close(); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Close: %v, want ErrDamaged", err)
	}
	if n := strings.Count(logs.String(), `"msg":"embedded store damaged"`); n != 1 {
		t.Fatalf("damage logged %d times, want once:\n%s", n, logs.String())
	}
}

// hugeCap is a slice capacity no make can satisfy: the panic a page size
// of 2^62 met.
var hugeCap = 1 << 62

// TestOrdinaryPanicIsNoDamage: a panic that is no evidence of damage (one
// in this package's own code, not a fault on the mapped file and not
// bbolt's) fails its call as an internal error and leaves the store sound
// and working: no "damaged" verdict, no advice to move the file away.
func TestOrdinaryPanicIsNoDamage(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	s, err := Open(filepath.Join(t.TempDir(), "store.db"), WithClock(newFakeClock()), WithoutSync(),
		WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, opBody("before", "Accepted"))
	for name, call := range map[string]func() error{
		"view makeslice": func() error {
			return s.view(func(*bolt.Tx) error { _ = make([]store.Item, 0, hugeCap); return nil })
		},
		"update panic": func() error { return s.update(func(*bolt.Tx) error { panic("boom") }) },
		"view nil map": func() error {
			//nolint:staticcheck // SA5000: the nil map write is the bug under test
			return s.view(func(*bolt.Tx) error { var m map[string]int; m["x"]++; return nil })
		},
	} {
		err := call()
		if err == nil || errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "mv ") || !strings.Contains(err.Error(), "internal error") {
			t.Errorf("%s: %v, want an internal error that does not call the file damaged", name, err)
		}
	}
	select {
	case <-s.Damaged():
		t.Fatalf("an ordinary panic condemned the store: %v", s.Err())
	default:
	}
	if _, err := s.Get(ctx, pk, "before"); err != nil {
		t.Errorf("Get after the panics: %v", err)
	}
	mustCreate(t, s, opBody("after", "Accepted"))
	if strings.Contains(logs.String(), "embedded store damaged") || strings.Count(logs.String(), `"msg":"embedded store call panicked`) != 3 {
		t.Errorf("want three panic lines and no damage line:\n%s", logs.String())
	}
}

// TestCallsRacingDamageAllReturn: calls already under way when the first
// one meets damage all come back. bbolt's beginTx faults with its meta
// lock held on a truncated file, so a call that passed the damage check
// just before and waits on that lock would wait forever (a dev run whose
// file was truncated never stopped: its terminal's feed read waited there).
func TestCallsRacingDamageAllReturn(t *testing.T) {
	ctx := context.Background()
	for round := range 5 {
		path := seedFile(t, 200)
		s, err := Open(path, WithSweepInterval(time.Hour), WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		truncate(t, path, damageSizes[0].size)
		const callers = 64
		errs := make(chan error, callers)
		start := make(chan struct{})
		for i := range callers {
			go func() {
				<-start
				var err error
				switch i % 3 {
				case 0:
					_, err = s.Get(ctx, pk, "op-00001")
				case 1:
					_, err = s.ChangeFeed(ctx, "", 10)
				default:
					_, err = s.Create(ctx, pk, opBody(fmt.Sprintf("racer-%d", i), "Accepted"))
				}
				errs <- err
			}()
		}
		close(start)
		deadline := time.After(20 * time.Second)
		for n := range callers {
			select {
			case err := <-errs:
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("round %d: a call on the truncated file: %v, want ErrDamaged", round, err)
				}
			case <-deadline:
				t.Fatalf("round %d: %d of %d calls still waiting 20s after the file was truncated", round, callers-n, callers)
			}
		}
		_ = s.Close()
	}
}
