// Package testsupport is what every test layer shares: the manual clock,
// log records and buffers, the real-stack switch and the go command. It imports
// only the standard library, so any package's own tests can use it without
// an import cycle.
package testsupport

import (
	"sync"
	"testing"
	"time"
)

// Clock is a manual clock: it moves only when a test says so, so no test
// waits on real time. It is safe for a background goroutine (a sweeper, a
// simulator's state machine) to read while the test moves it.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	changed chan struct{} // closed and replaced when a waiter arrives
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// Epoch is when every test's world starts unless it needs another day:
// one date, so a test's expected times read against one origin.
func Epoch() time.Time { return time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC) }

// NewClock starts a clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now, changed: make(chan struct{})} }

// Now is the clock's time; pass the method value where a func() time.Time
// is injected.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fire(c.now.Add(d))
}

// Set moves the clock to t, backwards too (a clock step a test provokes).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fire(t)
}

// fire moves the clock to t and releases every waiter due by then; the
// caller holds c.mu.
func (c *Clock) fire(t time.Time) {
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(t) {
			w.ch <- t
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// After is time.After on this clock: the channel fires once the test has
// moved the clock d past now.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
	return ch
}

// AwaitWaiter blocks until something waits on After for a time past now and
// returns that time, so a test moves the clock only once the code under test
// is parked on it. It fails the test after a generous 5 s.
func (c *Clock) AwaitWaiter(t testing.TB) time.Time {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		for _, w := range c.waiters {
			if w.at.After(c.now) {
				at := w.at
				c.mu.Unlock()
				return at
			}
		}
		if c.changed == nil { // a zero Clock
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("nothing started waiting on the clock within 5s")
		}
	}
}
