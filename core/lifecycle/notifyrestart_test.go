package lifecycle

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// slots counts the attempts the notification schedule has due, as failed
// spaces them: 15s, 30s, 1m, ... doubling to at most 15m.
func TestBackoffSlots(t *testing.T) {
	b := newBackoff(15*time.Second, 15*time.Minute, 10)
	for _, tc := range []struct {
		elapsed time.Duration
		want    int
	}{
		{0, 1}, {14 * time.Second, 1}, {15 * time.Second, 2}, {44 * time.Second, 2}, {45 * time.Second, 3},
		{105 * time.Second, 4}, {225 * time.Second, 5}, {465 * time.Second, 6},
		{945*time.Second - 1, 6}, {945 * time.Second, 7}, // 7m45s + 8m
		{1845 * time.Second, 8}, {1845*time.Second + 10*15*time.Minute, 18}, // then 15m apart
	} {
		if got := b.slots(tc.elapsed); got != tc.want {
			t.Errorf("slots(%v) = %d, want %d", tc.elapsed, got, tc.want)
		}
	}
	if got := newBackoff(time.Minute, time.Minute, 1).slots(3*time.Minute + time.Second); got != 4 {
		t.Errorf("slots at a base equal to the cap = %d, want 4 (0, 1m, 2m, 3m)", got)
	}
}

// A restart does not number a failing notification's next attempt 1
// again: the new process takes its schedule up from when the operation
// became terminal, so the attempt number the notifications alert reads
// goes on rising across the restart (attempt 4, then not attempt 1).
func TestNotificationAttemptsGoOnAcrossARestart(t *testing.T) {
	e := newEnv(t)
	e.sink.failNext(1000)
	name := e.create(t, document.KindCluster, clusterRID("unheard"), request{notify: true})
	e.runToTerminal(t, name)
	for len(e.attempts(name)) < 4 {
		e.clk.Advance(e.cfg.NotifyBackoffMax)
		e.tick(t)
	}
	before := e.attempts(name)
	if len(before) != 4 || before[0] != 1 || before[3] != 4 {
		t.Fatalf("attempts before the restart = %v, want 1 to 4", before)
	}
	e.engine = e.newEngine(t) // a restart: a new process on the same store
	e.clk.Advance(e.cfg.NotifyBackoffMax)
	e.tick(t)
	after := e.attempts(name)
	if len(after) != len(before)+1 {
		t.Fatalf("attempts after the restart's tick = %v, want one more than %v", after, before)
	}
	if got := after[len(after)-1]; got <= 4 {
		t.Errorf("the first attempt after the restart is numbered %d, want more than the 4 made before it", got)
	}
	// And the schedule goes on from there: the next is not due at once.
	e.tick(t)
	if n := len(e.attempts(name)); n != len(after) {
		t.Errorf("a second tick at once made another attempt (%d in all): the restart hurried the schedule", n)
	}
}

// attempts are the attempt numbers of name's notification records, in
// order.
func (e *env) attempts(name string) []int {
	re := regexp.MustCompile(`attempt=(\d+)`)
	var out []int
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if !strings.Contains(l, "msg="+MsgNotification) || !strings.Contains(l, "operation_id="+name) {
			continue
		}
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}
