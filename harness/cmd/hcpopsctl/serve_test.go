package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// TestServeLogStreams runs the built binary as the Functions host runs it
// and checks what the host would make of its output: the host logs stdout
// lines at Information and every stderr line without "warn" at Error, so
// INFO must be on stdout only and WARN/ERROR on stderr only.
func TestServeLogStreams(t *testing.T) {
	bin := buildBinary(t, shippedBinary)
	port := testsupport.FreePort(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(append(os.Environ(), shippedEnv(t)...),
		"FUNCTIONS_CUSTOMHANDLER_PORT="+port,
		"CLUSTERS_SERVICE_URL=http://127.0.0.1:9",
		// Left empty on purpose: the caller check says so at Error at start.
		"HCPOPS_ARM_CLIENT_APP_IDS=",
		"HCPOPS_LOG_LEVEL=info")
	var stdout testsupport.Buffer
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }() // it may have exited
	base := "http://127.0.0.1:" + port
	waitReady(t, &stdout)

	tick, err := os.ReadFile("events/testdata/tick.json")
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string, body []byte) int {
		resp, err := http.Post(base+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post("/pollOperations", tick); s != 200 {
		t.Fatalf("tick: %d", s)
	}
	if s := post("/pollOperations", []byte(`{"Data":{"timer":42}}`)); s != 400 {
		t.Fatalf("bad invocation: %d, want 400", s)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v\nstderr:\n%s", err, stderr.String())
	}

	out, errs := lines(t, "stdout", []byte(stdout.String())), lines(t, "stderr", stderr.Bytes())
	for _, l := range out {
		if l["level"] != "INFO" {
			t.Errorf("stdout has a %v line: %v", l["level"], l)
		}
	}
	for _, l := range errs {
		if l["level"] != "WARN" && l["level"] != "ERROR" {
			t.Errorf("stderr has a %v line: %v", l["level"], l)
		}
	}
	find := func(ls []map[string]any, msg string) map[string]any {
		for _, l := range ls {
			if l["msg"] == msg {
				return l
			}
		}
		return nil
	}
	if l := find(out, "poll.tick"); l == nil || l["status"] != float64(200) || l["invocation_id"] == nil {
		t.Errorf("no poll.tick record with status and invocation id on stdout:\n%s", stdout.String())
	}
	var bad map[string]any
	for _, l := range errs {
		if l["msg"] == "invocation" && l["status"] == float64(400) {
			bad = l
		}
	}
	if bad == nil || !strings.Contains(bad["error"].(string), "Data.timer") {
		t.Errorf("no WARN line naming the bad field on stderr:\n%s", stderr.String())
	}
	if find(errs, "caller check is on but HCPOPS_ARM_CLIENT_APP_IDS is empty: every HTTP request will be refused with 401 or 403") == nil {
		t.Errorf("no ERROR line about the empty allow-list on stderr:\n%s", stderr.String())
	}
	// The host files a stderr line under Warning only if it says "warn".
	for _, l := range errs {
		if l["level"] == "WARN" {
			if raw, _ := json.Marshal(l); !strings.Contains(strings.ToLower(string(raw)), "warn") {
				t.Errorf("WARN line the host would log as Error: %s", raw)
			}
		}
	}
}

func lines(t *testing.T, name string, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("%s line is not JSON: %q", name, sc.Text())
			continue
		}
		out = append(out, m)
	}
	return out
}

// waitReady waits for serve to say on stdout that it listens: from then
// on the host's readiness ping would be answered.
func waitReady(t *testing.T, stdout *testsupport.Buffer) {
	t.Helper()
	stdout.AwaitText(t, `"msg":"custom handler listening"`)
}

// TestServeClaimsItsPortFirst: the host's port is taken before serve opens
// any listener of its own. The store API listens on an ephemeral port, and
// the kernel may hand out the very port the host (or a test) just found
// free; a make test beside another once met it: the store API got the
// handler's port and the handler never listened. Here the port is held, so
// serve must fail on it before it shares the store.
func TestServeClaimsItsPortFirst(t *testing.T) {
	testsupport.RealStack(t, "the developer binary, built and run")
	bin := buildBinary(t, devBinary) // the one that shares its store
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := fmt.Sprint(held.Addr().(*net.TCPAddr).Port)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"FUNCTIONS_CUSTOMHANDLER_PORT="+port,
		"HCPOPS_DATA_DIR="+dir,
		"CLUSTERS_SERVICE_URL=http://127.0.0.1:9",
		"HCPOPS_LOG_LEVEL=info")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("serve on a held port exited 0\nstdout:\n%s", stdout.String())
	}
	if want := "listening on 127.0.0.1:" + port; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	if strings.Contains(stdout.String(), "store shared with the CLI") {
		t.Errorf("serve shared the store before it had its own port:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "store-api.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("store-api.json after a failed start: %v", err)
	}
}
