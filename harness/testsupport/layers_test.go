package testsupport

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRealStackSkipsUnderShort runs a test binary's real-stack test with
// and without -short and reads what it says.
func TestRealStackSkipsUnderShort(t *testing.T) {
	if os.Getenv("TESTSUPPORT_REALSTACK_CHILD") == "1" {
		RealStack(t, "a child process")
		t.Log("ran in full")
		return
	}
	if testing.Short() {
		t.Skip("-short: runs this test binary as a child process")
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-test.short"}, "-short: a real-stack test; needs a child process"},
		{nil, "ran in full"},
	} {
		args := append([]string{"-test.run", "^TestRealStackSkipsUnderShort$", "-test.v"}, tc.flags...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TESTSUPPORT_REALSTACK_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("with %v: %v, output:\n%s\nwant %q", tc.flags, err, out, tc.want)
		}
	}
}
