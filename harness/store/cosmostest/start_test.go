package cosmostest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// TestStartWithoutNode re-runs itself with an empty PATH: the test fails
// unless the caller opted out explicitly, and then it skips loudly.
func TestStartWithoutNode(t *testing.T) {
	if os.Getenv("COSMOSTEST_CHILD") == "1" {
		cosmostest.Start(t)
		t.Log("Start returned")
		return
	}
	tests := []struct {
		skip     string
		wantFail bool
		wantText string
	}{
		{skip: "", wantFail: true, wantText: "node is not installed"},
		{skip: "true", wantFail: true, wantText: "set HCPOPS_SKIP_COSMOS_TESTS=1 to skip"},
		{skip: "1", wantFail: false, wantText: "SKIPPING COSMOS DB TEST (HCPOPS_SKIP_COSMOS_TESTS=1): node is not installed"},
	}
	for _, tc := range tests {
		t.Run(cosmostest.EnvSkip+"="+tc.skip, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartWithoutNode$", "-test.v")
			cmd.Env = append(os.Environ(), "COSMOSTEST_CHILD=1", "PATH="+t.TempDir(), "CI=", cosmostest.EnvSkip+"="+tc.skip)
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
