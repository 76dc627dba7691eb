package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The two binaries: the developer's (this package) and the Function App's,
// which is what the Functions host starts as `hcpops serve`.
const (
	devBinary     = "./harness/cmd/hcpopsctl"
	shippedBinary = "./cmd/hcpops"
)

// built holds the binaries this test binary built, by package: linking
// one costs seconds on a loaded machine, and the tests that run one only
// read it. It is package state on purpose; TestMain removes dir.
var built struct {
	mu   sync.Mutex
	dir  string
	bins map[string]string
}

// buildBinary builds hcpops from pkg as users run it, once per test
// binary.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	testsupport.RealStack(t, "go build of the binary it runs")
	built.mu.Lock()
	defer built.mu.Unlock()
	if bin, ok := built.bins[pkg]; ok {
		return bin
	}
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "hcpops-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		built.dir, built.bins = dir, map[string]string{}
	}
	bin := filepath.Join(built.dir, fmt.Sprintf("hcpops-%d", len(built.bins)))
	cmd := testsupport.GoCommand(t, nil, "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building hcpops: %v\n%s", err, out)
	}
	built.bins[pkg] = bin
	return bin
}

// seedStore writes n active operations into dir/store.db, enough pages that
// a half truncation loses some of them.
func seedStore(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "store.db")
	s, err := embedded.Open(path, embedded.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	pad := strings.Repeat("x", 400)
	for i := range n {
		id := fmt.Sprintf("op-%05d", i)
		doc := `{"id":"` + id + `","partitionKey":"` + sub + `","ttl":604800,"pad":"` + pad + `",` +
			`"resourceID":"/subscriptions/` + sub + `/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/` + id + `",` +
			`"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"status":"Accepted"}}`
		if _, err := s.Create(context.Background(), sub, []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func truncateTo(t *testing.T, path string, size func(int64) int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size(fi.Size())); err != nil {
		t.Fatal(err)
	}
}

// checkRefusal asserts a clean exit 1 whose message names the file and
// what to do, and no panic.
func checkRefusal(t *testing.T, err error, stderr, path string) {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want exit status 1\nstderr: %s", err, stderr)
	}
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Fatalf("the process panicked:\n%s", stderr)
	}
	if !strings.Contains(stderr, "damaged: "+path) || !strings.Contains(stderr, "move it away") {
		t.Fatalf("stderr does not name %s and what to do:\n%s", path, stderr)
	}
}

// TestDamagedStoreFileCLIAndServe: a store file cut short (at 0 bytes, 8
// KiB, half, as a full disk or a killed copy leaves it) through the built
// binaries. `doc list` and `serve` exit 1 with the message instead of
// panicking (or, at 0 bytes, silently starting empty).
func TestDamagedStoreFileCLIAndServe(t *testing.T) {
	cli := buildBinary(t, devBinary)
	for _, tc := range []struct {
		name string
		size func(int64) int64
	}{
		{"0 bytes", func(int64) int64 { return 0 }},
		{"8 KiB", func(int64) int64 { return 8 << 10 }},
		{"half", func(n int64) int64 { return n / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := seedStore(t, dir, 2000)
			truncateTo(t, path, tc.size)
			before, _ := os.ReadFile(path)
			env := append(os.Environ(), "HCPOPS_DATA_DIR="+dir, "CLUSTERS_SERVICE_URL=http://127.0.0.1:9",
				"FUNCTIONS_CUSTOMHANDLER_PORT="+testsupport.FreePort(t))
			for _, run := range []struct {
				bin  string
				args []string
			}{{cli, []string{"doc", "list", "-active"}}, {cli, []string{"serve"}}} {
				args := run.args
				cmd := exec.Command(run.bin, args...)
				cmd.Env = env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				done := make(chan error, 1)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					checkRefusal(t, err, stderr.String(), path)
				case <-time.After(60 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("hcpops %s did not exit on a damaged store\nstderr: %s", strings.Join(args, " "), stderr.String())
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Fatal("the damaged file was changed")
			}
		})
	}
	t.Run("damaged under a running serve", func(t *testing.T) { serveDamagedUnderIt(t, cli) })
}

// TestShippedServeRunsOnCosmosOnly: the Function App's binary holds no
// local store. Without a Cosmos DB connection its serve exits 1 naming the
// setting, and creates nothing in the data dir the developer binary uses.
func TestShippedServeRunsOnCosmosOnly(t *testing.T) {
	shipped := buildBinary(t, shippedBinary)
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(shipped, "serve")
	cmd.Env = append(os.Environ(), "HCPOPS_DATA_DIR="+dir, "CLUSTERS_SERVICE_URL=http://127.0.0.1:9",
		"FUNCTIONS_CUSTOMHANDLER_PORT="+testsupport.FreePort(t), "CosmosDB__accountEndpoint=", "CosmosDB=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("shipped serve without Cosmos DB: %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "runs on Cosmos DB") {
		t.Errorf("shipped serve's refusal does not say why:\n%s", out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("shipped serve created the data dir %s: %v", dir, err)
	}
}

// serveDamagedUnderIt: a file damaged while serve runs (which used to crash
// the TTL sweeper, and the host restarted it in a loop) stops serve with exit 1 and the message at the first call
// that meets the damage.
func serveDamagedUnderIt(t *testing.T, bin string) {
	dir := t.TempDir()
	path := seedStore(t, dir, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim := simulator.New()
	simURL, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	port := testsupport.FreePort(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "HCPOPS_DATA_DIR="+dir, "CLUSTERS_SERVICE_URL="+simURL, "CLUSTERS_SERVICE_RETRY_LIMIT=0",
		"FUNCTIONS_CUSTOMHANDLER_PORT="+port)
	var stdout, stderr testsupport.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	base := "http://127.0.0.1:" + port
	waitReady(t, &stdout)
	truncateTo(t, path, func(n int64) int64 { return n / 2 })
	tick, err := os.ReadFile("events/testdata/tick.json")
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Post(base+"/pollOperations", "application/json", bytes.NewReader(tick)); err == nil {
		resp.Body.Close() // the tick itself fails; what matters is how serve ends
	}
	select {
	case err := <-done:
		checkRefusal(t, err, stderr.String(), path)
		t.Logf("serve ended: %s", lastLine(stderr.String()))
	case <-time.After(60 * time.Second):
		t.Fatalf("serve kept running on a damaged store\nstderr: %s", stderr.String())
	}
}

// shippedEnv is the environment the Function App's binary runs with here:
// the settings of a database on the Cosmos-compatible test server, its
// containers created as deploy/main.bicep creates them in Azure.
func shippedEnv(t *testing.T) []string {
	t.Helper()
	cfg := cosmostest.Config(t)
	st, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.EnsureContainers(ctx); err != nil {
		t.Fatalf("creating the test database's containers: %v", err)
	}
	var env []string
	for k, v := range cosmostest.Settings(cfg) {
		env = append(env, k+"="+v)
	}
	return env
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
