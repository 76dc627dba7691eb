package dst

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain runs the collector less often than Go's default: a run's heap
// is a few megabytes and garbage is most of what it makes, so at GOGC=400
// a run costs a third less CPU (docs/testing.md has the runs a minute).
func TestMain(m *testing.M) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
