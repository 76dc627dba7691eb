package embedded

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storetest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// fakeClock is a settable clock, safe for the sweeper goroutine to read.
type fakeClock = testsupport.Clock

func newFakeClock() *fakeClock {
	return testsupport.NewClock(time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC))
}

// openTest opens a fresh store on a fake clock; the sweeper runs often so
// tests exercise it alongside their own calls. It skips fsync to keep tests
// fast; TestContractOffSecond and TestReopenKeepsDocumentsAndFeed run durable.
func openTest(t testing.TB, opts ...Option) (*Store, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	opts = append([]Option{WithClock(clock), WithSweepInterval(20 * time.Millisecond), WithoutSync()}, opts...)
	s, err := Open(filepath.Join(t.TempDir(), "store.db"), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, clock
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		s, clock := openTest(t)
		return storetest.Harness{Store: s, Advance: clock.Advance, Clock: clock, Foreign: foreignStore}
	})
}

// TestContractOffSecond runs the suite durable (fsync on every commit)
// on a clock a tenth of a second before a whole second, so every TTL and
// FeedSince check straddles _ts's whole-second rounding as a wall clock
// would make it, without waiting for one.
func TestContractOffSecond(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		clock := testsupport.NewClock(time.Date(2026, 3, 14, 2, 0, 0, 900_000_000, time.UTC))
		s, err := Open(filepath.Join(t.TempDir(), "store.db"), WithClock(clock), WithSweepInterval(20*time.Millisecond))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return storetest.Harness{Store: s, Advance: clock.Advance, Clock: clock, Foreign: foreignStore}
	})
}

// foreignStore is another store file, for the feed's gap tests.
func foreignStore(t *testing.T) store.Store {
	s, _ := openTest(t)
	return s
}
