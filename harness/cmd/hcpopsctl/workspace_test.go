package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// workspace is a fresh directory with bin/hcpopsctl (this test binary acting
// as hcpops), where a test types commands as a person would.
type workspace struct {
	dir, repo string
	env       []string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	testsupport.RealStack(t, "this test binary run as hcpops in child processes")
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := &workspace{dir: t.TempDir(), repo: repo}
	if err := os.MkdirAll(filepath.Join(w.dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(w.dir, "bin", "hcpopsctl")); err != nil {
		t.Fatal(err)
	}
	w.env = append(os.Environ(), envAsMain+"=1", "HCPOPS_DATA_DIR=", "CosmosDB=", "CosmosDB__accountEndpoint=",
		"PATH="+filepath.Join(w.dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	return w
}

func (w *workspace) bin() string { return filepath.Join(w.dir, "bin", "hcpopsctl") }

// result is what one command printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
}

// hcpops runs bin/hcpopsctl args in the workspace, stdin from stdin.
func (w *workspace) hcpops(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.bin(), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = w.dir, w.env, strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hcpops %v: %v", args, err)
	}
	return r
}

// devProcess is an `hcpopsctl dev` running in the workspace.
type devProcess struct {
	cmd   *exec.Cmd
	out   *testsupport.Buffer
	front string // host:port of the HTTP front door
	sim   string // URL of the Clusters Service simulator
	sink  string // URL of the notification sink
	done  chan error
}

// devArgs are short timings for a dev under test, on free ports.
func devArgs(w *workspace, extra ...string) []string {
	return append([]string{"dev", "-script-root", w.repo, "-samples=false", "-http-addr", "127.0.0.1:0",
		"-cs-addr", "127.0.0.1:0", "-phase", "200ms", "-feed-poll-delay", "100ms",
		"-schedule", "pollOperations=* * * * * *"}, extra...)
}

// startDev runs hcpopsctl dev in the workspace until the test ends (or kill).
func (w *workspace) startDev(t *testing.T, extra ...string) *devProcess {
	t.Helper()
	d := &devProcess{out: &testsupport.Buffer{}, done: make(chan error, 1)}
	d.cmd = exec.Command(w.bin(), devArgs(w, extra...)...)
	d.cmd.Dir, d.cmd.Env = w.dir, w.env
	pipe, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stderr = d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(d.out, line)
			if m := regexp.MustCompile(`^  clusters svc   (\S+)`).FindStringSubmatch(line); m != nil {
				d.sim = m[1]
			}
			if m := regexp.MustCompile(`^  notifications  (\S+)`).FindStringSubmatch(line); m != nil {
				d.sink = m[1]
			}
			if m := regexp.MustCompile(`^  http functions http://(\S+)`).FindStringSubmatch(line); m != nil {
				d.front = m[1]
				close(started)
			}
		}
		_, _ = io.Copy(io.Discard, pipe) // drained so dev never blocks on a full pipe
		d.done <- d.cmd.Wait()
	}()
	t.Cleanup(func() { d.stop(t, w) })
	select {
	case <-started:
	case err := <-d.done:
		d.done <- err
		t.Fatalf("dev stopped before serving (%v):\n%s", err, d.out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("dev did not start:\n%s", d.out.String())
	}
	return d
}

// stop interrupts dev, as Ctrl-C does, and waits for it.
func (d *devProcess) stop(t *testing.T, w *workspace) {
	if d.cmd.ProcessState != nil {
		return
	}
	// How it exits is checked by the tests that stop it on purpose.
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.done:
		_ = err
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		t.Errorf("dev did not stop within a minute of its interrupt; killed: %v", <-d.done)
	}
	if t.Failed() {
		log, _ := os.ReadFile(filepath.Join(w.dir, ".data", "dev.log"))
		t.Logf("dev output:\n%s\n--- dev.log (tail)\n%s", d.out.String(), tail(string(log), 4000))
	}
}

// kill ends dev as a crash does: no cleanup, its advert left behind.
func (d *devProcess) kill(t *testing.T) {
	_ = d.cmd.Process.Kill()
	t.Logf("dev killed: %v", <-d.done)
	d.done <- nil
}

// waitFor polls until cond holds, or fails the test after a minute (the
// machine may be loaded).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(90 * time.Second)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
