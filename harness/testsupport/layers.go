package testsupport

import "testing"

// RealStack marks a test of the real stack: one that needs what a unit
// test does without — a child process, node, tmux, a binary it builds, or
// seconds of real time. Under -short it is skipped, saying what it needs,
// so `go test -short ./...` is the unit layer alone; `make test` runs
// everything.
func RealStack(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: a real-stack test; needs %s", needs)
	}
}
