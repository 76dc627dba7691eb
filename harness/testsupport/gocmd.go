package testsupport

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// GoCommand is the go command with args, for a test that builds or lists
// the module: a real-stack test (skipped under -short). go test puts its
// own GOROOT/bin first on a test's PATH, so the go found is the one
// running the test; the toolchain is pinned to this test's too (unless the
// caller chose one), since a machine's own older go would refuse go.mod.
// env is added to the test's environment.
func GoCommand(t testing.TB, env []string, args ...string) *exec.Cmd {
	t.Helper()
	RealStack(t, "the go command")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	cmd := exec.Command(goTool, args...)
	cmd.Env = append(os.Environ(), env...)
	if os.Getenv("GOTOOLCHAIN") == "" && strings.HasPrefix(runtime.Version(), "go") {
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+runtime.Version())
	}
	return cmd
}
