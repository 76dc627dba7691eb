package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// envAsMain makes the test binary act as hcpops: the walkthrough runs the
// same code a user's binary does, without a second build.
const envAsMain = "HCPOPS_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envAsMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// walkthroughMarker precedes the README block TestREADMEWalkthrough runs.
const walkthroughMarker = "<!-- walkthrough:"

// readmeWalkthrough is the shell block after the marker.
func readmeWalkthrough(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, walkthroughMarker)
	if i < 0 {
		t.Fatalf("README.md has no %q block", walkthroughMarker)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatal("no ```sh block after the walkthrough marker")
	}
	return m[1]
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestREADMEWalkthrough starts `hcpops dev` with short timings in a fresh
// directory and runs the README's "try it" block there as written, the one
// change being the front door's port (7071 may be taken on a shared
// machine). It checks what each command printed and that the running dev
// showed both operations reaching Succeeded.
func TestREADMEWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("the walkthrough needs bash: %v", err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("the walkthrough needs curl: %v", err)
	}
	script := readmeWalkthrough(t)
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(work, "bin", "hcpops")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), envAsMain+"=1", "HCPOPS_DATA_DIR=", "CosmosDB=", "CosmosDB__accountEndpoint=")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := exec.CommandContext(ctx, filepath.Join(work, "bin", "hcpops"), "dev", "-script-root", repo, "-samples=false", "-sim-addr", "127.0.0.1:0",
		"-http-addr", "127.0.0.1:0", "-phase", "200ms", "-feed-poll-delay", "100ms", "-schedule", "pollOperations=* * * * * *")
	dev.Dir, dev.Env = work, env
	var devOut lockedBuffer
	pipe, err := dev.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	dev.Stderr = &devOut
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		dev.Process.Signal(os.Interrupt)
		dev.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(work, ".data", "dev.log"))
			t.Logf("dev output:\n%s\n--- dev.log (tail)\n%s", devOut.String(), tail(string(log), 4000))
		}
	}()
	front := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(&devOut, line)
			if m := regexp.MustCompile(`^  http functions http://(\S+)`).FindStringSubmatch(line); m != nil {
				front <- m[1]
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	var addr string
	select {
	case addr = <-front:
	case <-ctx.Done():
		t.Fatalf("dev did not start:\n%s", devOut.String())
	}

	script = strings.ReplaceAll(script, "127.0.0.1:7071", addr)
	sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	sh.Dir, sh.Env = work, env
	out, err := sh.CombinedOutput()
	t.Logf("walkthrough output:\n%s", out)
	if err != nil {
		t.Fatalf("the README walkthrough failed: %v", err)
	}
	text := string(out)
	ops := regexp.MustCompile(`(?m)^operation ([0-9a-f-]{36})$`).FindAllStringSubmatch(text, -1)
	if len(ops) != 1 {
		t.Fatalf("want the cluster's submit output, got %d operations", len(ops))
	}
	np := regexp.MustCompile(`"name": "([0-9a-f-]{36})"`).FindStringSubmatch(text)
	if np == nil || np[1] == ops[0][1] {
		t.Fatalf("no status body of the node pool in the output")
	}
	ops = append(ops, np)
	for _, want := range []string{
		"curl      curl -s '" + "http://" + addr + "/subscriptions/", // submit prints a curl for the running dev
		`"name": "` + ops[1][1] + `"`,                                // curl and status answer for the node pool
		`"status": "Succeeded"`,                                      // status once it finished
		`"resourceID": "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/demo/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo"`, // doc get
	} {
		if !strings.Contains(text, want) {
			t.Errorf("walkthrough output lacks %q", want)
		}
	}
	// The running dev's live output followed both to Succeeded.
	deadline := time.Now().Add(time.Minute)
	for _, op := range ops {
		re := regexp.MustCompile(regexp.QuoteMeta(op[1]) + `.*-> Succeeded`)
		for !re.MatchString(devOut.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("dev's output never showed %s reach Succeeded", op[1])
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
