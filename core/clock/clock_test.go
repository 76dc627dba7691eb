package clock_test

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The manual clock every test uses is a Clock.
var _ clock.Clock = (*testsupport.Clock)(nil)

func TestReal(t *testing.T) {
	before := time.Now()
	c := clock.OrReal(nil)
	if _, ok := c.(clock.Real); !ok {
		t.Fatalf("OrReal(nil) = %T, want clock.Real", c)
	}
	if now := c.Now(); now.Before(before) {
		t.Errorf("Now() = %v, before %v", now, before)
	}
	select {
	case <-c.After(0):
	case <-time.After(5 * time.Second):
		t.Fatal("After(0) did not fire")
	}
	manual := testsupport.NewClock(before)
	if got := clock.OrReal(manual); got != clock.Clock(manual) {
		t.Errorf("OrReal(manual) = %v, want the manual clock", got)
	}
}
