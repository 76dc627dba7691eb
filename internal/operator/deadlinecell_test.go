package operator

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// TestDeadlineCell: a deadline ahead says when the tick fails the
// operation; one passed says the operation is held on CS's word (or its
// next attempt is not due), never that it fails now.
func TestDeadlineCell(t *testing.T) {
	now := testsupport.Epoch()
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, tc := range []struct {
		deadline *time.Time
		want     string
	}{
		{nil, "-"},
		{at(37 * time.Minute), "fails in 37m"},
		{at(-3 * time.Hour), "PAST (due 3h ago): held while CS says it is under way"},
	} {
		if got := deadlineCell(opRow{Deadline: tc.deadline}, now); got != tc.want {
			t.Errorf("deadlineCell(%v) = %q, want %q", tc.deadline, got, tc.want)
		}
	}
}
