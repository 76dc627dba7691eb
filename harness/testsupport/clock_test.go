package testsupport

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	start := Epoch()
	c := NewClock(start)
	steps := []struct {
		name string
		move func()
		want time.Time
	}{
		{"starts where told", func() {}, start},
		{"advance", func() { c.Advance(90 * time.Second) }, start.Add(90 * time.Second)},
		{"advance adds up", func() { c.Advance(time.Hour) }, start.Add(time.Hour + 90*time.Second)},
		{"set goes back", func() { c.Set(start.Add(-time.Minute)) }, start.Add(-time.Minute)},
	}
	for _, s := range steps {
		s.move()
		if got := c.Now(); !got.Equal(s.want) {
			t.Fatalf("%s: Now() = %s, want %s", s.name, got, s.want)
		}
	}
}

// Readers in other goroutines see every advance (run with -race).
func TestClockConcurrent(t *testing.T) {
	c := NewClock(time.Time{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				c.Advance(time.Second)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	if got := c.Now().Sub(time.Time{}); got != 4000*time.Second {
		t.Fatalf("after 4000 advances of 1s the clock moved %s", got)
	}
}

// After fires only when the clock reaches it, and AwaitWaiter sees the
// waiter a goroutine parks on the clock.
func TestClockAfter(t *testing.T) {
	start := Epoch()
	for _, c := range []*Clock{NewClock(start), {now: start}} { // the zero value works too
		got := make(chan time.Time, 1)
		go func() { got <- <-c.After(time.Minute) }()
		if at := c.AwaitWaiter(t); !at.Equal(start.Add(time.Minute)) {
			t.Fatalf("AwaitWaiter = %s, want %s", at, start.Add(time.Minute))
		}
		c.Advance(59 * time.Second)
		select {
		case v := <-got:
			t.Fatalf("After fired at %s, a second early", v)
		default:
		}
		c.Set(start.Add(time.Minute))
		select {
		case v := <-got:
			if !v.Equal(start.Add(time.Minute)) {
				t.Errorf("After fired with %s", v)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("After did not fire when the clock reached it")
		}
		if v := <-c.After(0); !v.Equal(start.Add(time.Minute)) {
			t.Errorf("After(0) = %s, want now", v)
		}
	}
}
