// Package testsupport is what tests across the module share. It imports
// only the standard library, so any package's own tests can use it without
// an import cycle.
package testsupport

import (
	"sync"
	"time"
)

// Clock is a manual clock: it moves only when a test says so, so no test
// waits on real time. It is safe for a background goroutine (a sweeper, a
// simulator's state machine) to read while the test moves it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

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
	c.now = c.now.Add(d)
}

// Set moves the clock to t, backwards too (a clock step a test provokes).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
