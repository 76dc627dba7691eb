package triggerhost

import "time"

// Clock is the host's time source; tests inject a fake one so schedules and
// retry delays run without sleeping.
type Clock interface {
	Now() time.Time
	// After fires once d has passed, like time.After.
	After(d time.Duration) <-chan time.Time
}

// WallClock is the real clock.
type WallClock struct{}

// Now returns the current time.
func (WallClock) Now() time.Time { return time.Now() }

// After is time.After.
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
