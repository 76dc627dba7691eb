package soak

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSettleGoroutinesReportsALeak(t *testing.T) {
	before := runtime.NumGoroutine()
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
