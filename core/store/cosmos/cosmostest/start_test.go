package cosmostest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store/cosmos/cosmostest"
)

// TestStartWithoutNode re-runs itself with an empty PATH: a developer's
// machine skips loudly, CI fails.
func TestStartWithoutNode(t *testing.T) {
	if os.Getenv("COSMOSTEST_CHILD") == "1" {
		cosmostest.Start(t)
		t.Log("Start returned")
		return
	}
	tests := []struct {
		ci       string
		wantFail bool
		wantText string
	}{
		{ci: "", wantFail: false, wantText: "SKIPPING COSMOS DB TEST: node is not installed"},
		{ci: "true", wantFail: true, wantText: "CI=true and node is not installed"},
	}
	for _, tc := range tests {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartWithoutNode$", "-test.v")
			cmd.Env = append(os.Environ(), "COSMOSTEST_CHILD=1", "PATH="+t.TempDir(), "CI="+tc.ci)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tc.wantFail {
				t.Fatalf("child failed = %v (%v), want %v; output:\n%s", failed, err, tc.wantFail, out)
			}
			if !strings.Contains(string(out), tc.wantText) || strings.Contains(string(out), "Start returned") {
				t.Fatalf("child output lacks %q or went on past Start:\n%s", tc.wantText, out)
			}
		})
	}
}
