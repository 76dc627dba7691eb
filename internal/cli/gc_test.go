package cli

import (
	"context"
	"runtime/debug"
	"testing"
)

// TestSetGCLeavesAnOperatorsGOGC: without GOGC the collector's target
// becomes gcPercent; with it, the runtime's (the operator's) stays.
func TestSetGCLeavesAnOperatorsGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	if setGC(func(k string) (string, bool) { return "200", k == "GOGC" }) {
		t.Fatal("setGC set the target though GOGC was set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set, the target became %d; want the one already set (100)", got)
	}
	if !setGC(func(string) (string, bool) { return "", false }) {
		t.Fatal("setGC left the target though GOGC was not set")
	}
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Fatalf("without GOGC, the target is %d; want %d", got, gcPercent)
	}
}

// TestMainSetsTheCollectorsTarget: every binary's main goes through
// Main, which sets the target before its command runs, unless GOGC is set.
func TestMainSetsTheCollectorsTarget(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"GOGC unset", nil, gcPercent},
		{"GOGC set", map[string]string{"GOGC": "100"}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			got := -2
			Main(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, func(context.Context, []string) error {
				got = debug.SetGCPercent(100)
				return nil
			})
			if got != tc.want {
				t.Errorf("the command ran with GOGC=%d; want %d", got, tc.want)
			}
		})
	}
}
