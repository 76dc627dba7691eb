package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestSkipLoggedOnce: an operation left alone is counted every tick but
// logged once per reason, with its ids, and again when the reason changes.
func TestSkipLoggedOnce(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	op := dispatched(t, e, e.create(t, document.KindNodePool, np1(), request{}))
	edit(t, e, np1(), func(s obj) { delete(s, "activeOperationId") })
	const line = "operation skipped: left alone until its documents change"
	lines := func() int { return strings.Count(e.logs.String(), line) }
	for range 3 {
		res := e.tick(t)
		if res.Skipped != 1 || res.SkippedReasons[SkipNoActiveOperation] != 1 || len(res.SkippedReasons) != len(skipReasons) {
			t.Fatalf("tick = %+v, want one %s and every reason present", res, SkipNoActiveOperation)
		}
	}
	if n := lines(); n != 1 {
		t.Fatalf("the skip was logged %d times in three ticks, want once", n)
	}
	for _, want := range []string{"reason=" + SkipNoActiveOperation, "operation_id=" + op, "level=WARN"} {
		if !strings.Contains(e.logs.String(), want) {
			t.Errorf("the skip line lacks %s", want)
		}
	}
	edit(t, e, np1(), func(s obj) { s["activeOperationId"] = "garbage" })
	if res := e.tick(t); res.SkippedReasons[SkipActiveOperationUnreadable] != 1 || lines() != 2 {
		t.Errorf("after the reason changed: tick %+v, %d lines; want the new reason counted and logged", res, lines())
	}
	// Owned again, the operation goes on; skipped once more later, it is
	// logged again.
	edit(t, e, np1(), func(s obj) { s["activeOperationId"] = op })
	e.clk.Advance(time.Minute)
	if res := e.tick(t); res.Skipped != 0 {
		t.Fatalf("owned again: tick %+v, want nothing skipped", res)
	}
	edit(t, e, np1(), func(s obj) { s["activeOperationId"] = "garbage" })
	e.tick(t)
	if lines() != 3 {
		t.Errorf("skip lines = %d, want a third after the operation was decided in between", lines())
	}
	e.wantOp(t, op, arm.ProvisioningStateAccepted, "") // skipped: never written
}

// TestSkipLogBound: a full skip log forgets the operation skipped longest
// ago, and only that one.
func TestSkipLogBound(t *testing.T) {
	s := newSkipLog(2)
	if !s.first(ref("a"), SkipResourceNotFound) || !s.first(ref("b"), SkipResourceNotFound) {
		t.Fatal("first skips not reported as first")
	}
	if s.first(ref("a"), SkipResourceNotFound) {
		t.Error("a second skip for the same reason reported as first")
	}
	if !s.first(ref("c"), SkipResourceDeleting) { // full: a, the oldest, goes
		t.Fatal("c not reported as first")
	}
	if s.first(ref("b"), SkipResourceNotFound) || !s.first(ref("a"), SkipResourceNotFound) {
		t.Error("want b remembered and a forgotten")
	}
	if n := s.size.Load(); n != 2 {
		t.Errorf("size %d, want the bound 2", n)
	}
}
