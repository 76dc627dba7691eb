package embedded

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/storetest"
	"github.com/hcpops/hcpops/internal/testsupport"
)

// fakeClock is a settable clock, safe for the sweeper goroutine to read.
type fakeClock = testsupport.Clock

func newFakeClock() *fakeClock {
	return testsupport.NewClock(time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC))
}

// openTest opens a fresh store on a fake clock; the sweeper runs often so
// tests exercise it alongside their own calls. It skips fsync to keep tests
// fast; TestContractRealClock and TestReopenKeepsDocumentsAndFeed run durable.
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

// TestContractRealClock runs the suite the way the Cosmos store runs it: on
// the wall clock, with whole-second _ts, sleeping to let TTLs pass (about 3 s
// in all). It keeps the suite honest about real time.
func TestContractRealClock(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		s, err := Open(filepath.Join(t.TempDir(), "store.db"), WithSweepInterval(250*time.Millisecond))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return storetest.Harness{Store: s, Advance: time.Sleep, Foreign: foreignStore}
	})
}

// foreignStore is another store file, for the feed's gap tests.
func foreignStore(t *testing.T) store.Store {
	s, _ := openTest(t)
	return s
}
