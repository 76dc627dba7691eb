package soak

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// buildHandler builds the real hcpops binary, which the soak runs as
// `hcpops serve`.
func buildHandler(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "hcpops")
	cmd := testsupport.GoCommand(t, nil, "build", "-o", bin, "./cmd/hcpops")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building hcpops: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is written by the run's goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// shortArgs are the soak `make test` runs: 300 requests started over
// 15 s, three handler kills across two instances, short simulator phases,
// a sick subset with a 10 s deadline; the other faults at their defaults.
func shortArgs(handler, endpoint, logPath string) []string {
	return []string{"-ops", "300", "-duration", "15s", "-settle", "100s", "-seed", "1", "-phase", "150ms", "-kills", "3",
		"-instances", "2", "-sick-deadline", "10s", "-handler", handler, "-cosmos-endpoint", endpoint, "-log", logPath}
}

func TestSoakShort(t *testing.T) {
	testsupport.RealStack(t, "the soak: two hcpops serve children, node's Cosmos server, up to 115 s of real time")
	endpoint := cosmostest.Start(t) // first: without node it skips loudly, before the build
	logPath := filepath.Join(t.TempDir(), "soak.log")
	var out syncBuffer
	err := Main(context.Background(), shortArgs(buildHandler(t), endpoint, logPath), &out)
	t.Logf("summary:\n%s", out.String())
	if err != nil {
		t.Fatalf("%v\n--- log tail (%s)\n%s", err, logPath, logTail(logPath, 20))
	}
	// The summary is the soak's report; it must say what was injected.
	for _, want := range []string{"2 `hcpops serve` instances: 3 SIGKILLs, 5 starts", "duplicate creates: 0", "id searches listed every object twice",
		"6 of 6 Failed at their deadline", "every invariant held", "CS misrouted", "CS gateway", "on CS's own word about the object, 0 without it;", ", 0 no resource names"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not say %q", want)
		}
	}
}

func logTail(path string, lines int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
