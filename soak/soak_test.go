package soak

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store/cosmos/cosmostest"
)

// buildHandler builds the real hcpops binary, which the soak runs as
// `hcpops serve`.
func buildHandler(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "hcpops")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
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

// shortOptions are the soak `make test` runs: 300 requests started over
// 15 s, three handler kills, short simulator phases.
func shortOptions(t *testing.T, handler string) options {
	o := defaultOptions()
	o.ops, o.duration, o.settle, o.seed, o.phase, o.kills = 300, 15*time.Second, 60*time.Second, 1, 150*time.Millisecond, 3
	o.handler, o.cosmosEndpoint = handler, cosmostest.Start(t)
	o.logPath = filepath.Join(t.TempDir(), "soak.log")
	return o
}

func TestSoakShort(t *testing.T) {
	o := shortOptions(t, buildHandler(t))
	var out syncBuffer
	err := run(context.Background(), o, &out)
	t.Logf("summary:\n%s", out.String())
	if err != nil {
		t.Fatalf("%v\n--- log tail (%s)\n%s", err, o.logPath, logTail(o.logPath, 20))
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
