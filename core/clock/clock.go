// Package clock is the one time source hcpops takes: the lifecycle's
// deadlines, grace periods and backoff, the stores' timestamps and TTLs,
// the simulator's state machines and the local host's schedules all read
// it, so a test moves time with a manual clock (harness/testsupport)
// instead of waiting for it. Production code passes Real.
package clock

import "time"

// Clock tells the time and waits on it.
type Clock interface {
	Now() time.Time
	// After fires once d has passed on this clock, like time.After.
	After(d time.Duration) <-chan time.Time
}

// Real is the wall clock.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// After is time.After.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// OrReal is c, or Real when c is nil: what a constructor uses for a clock
// its caller left unset.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}
