package soak

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSettleGoroutinesReportsALeak(t *testing.T) {
	before := quietGoroutines()
	release := make(chan struct{})
	go leakyWorker(release)
	n, stacks := settleGoroutines(before, 50*time.Millisecond)
	if n <= before || !strings.Contains(stacks, "leakyWorker") {
		t.Errorf("with a goroutine left behind: count %d (before %d), stacks mention it: %v", n, before, strings.Contains(stacks, "leakyWorker"))
	}
	close(release)
	if n, stacks := settleGoroutines(before, 5*time.Second); stacks != "" {
		t.Errorf("after it ended: count %d (before %d), stacks reported", n, before)
	}
}

func leakyWorker(release chan struct{}) { <-release }

// quietGoroutines waits until goroutines left by earlier tests have wound
// down (the count holds for 200 ms), so a leak is not masked by one of them
// exiting during the check.
func quietGoroutines() int {
	n, stable := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(5 * time.Second); stable < 10 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			stable++
		} else {
			n, stable = m, 0
		}
	}
	return n
}
