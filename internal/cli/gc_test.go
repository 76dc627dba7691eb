package cli

import (
	"runtime/debug"
	"testing"
)

// TestSetGCLeavesAnOperatorsGOGC: without GOGC the collector's target
// becomes gcPercent; with it, the runtime's (the operator's) stays.
func TestSetGCLeavesAnOperatorsGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	if SetGC(func(k string) (string, bool) { return "200", k == "GOGC" }) {
		t.Fatal("SetGC set the target though GOGC was set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set, the target became %d; want the one already set (100)", got)
	}
	if !SetGC(func(string) (string, bool) { return "", false }) {
		t.Fatal("SetGC left the target though GOGC was not set")
	}
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Fatalf("without GOGC, the target is %d; want %d", got, gcPercent)
	}
}
