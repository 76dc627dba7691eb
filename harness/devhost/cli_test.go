package devhost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/frontend"
)

const cliSub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"

func cliCluster(name string) string {
	return "/subscriptions/" + cliSub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

// startDev runs dev without samples until the test ends and returns its
// host once it serves.
func startDev(t *testing.T, o options, out, logs *syncBuffer) *triggerhost.Host {
	t.Helper()
	o.samples, o.exitWhenDone, o.timeout = false, false, 0
	ctx, cancel := context.WithCancel(context.Background())
	hosts := make(chan *triggerhost.Host, 1)
	o.hooks.started = func(h *triggerhost.Host) { hosts <- h }
	done := make(chan error, 1)
	go func() { done <- run(ctx, o, out, logs, map[string]string{}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev run: %v", err)
		}
	})
	select {
	case h := <-hosts:
		return h
	case err := <-done:
		done <- err
		t.Fatalf("dev stopped before serving: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatal("dev did not start")
	}
	return nil
}

// The CLI beside a running dev: a cluster and its node pool submitted
// through the CLI's store (the running dev's, over its store API) are
// picked up by the change-feed pump, shown in the live output with a
// curl that works as printed, and both succeed.
func TestCLIWritesReachARunningDev(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	startDev(t, o, &out, &logs)
	getenv := func(k string) string {
		if k == localstore.EnvDataDir {
			return o.dataDir
		}
		return ""
	}
	s, conn, err := localstore.ConnectStore(context.Background(), getenv, localstore.ReadWrite, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(conn.Name, "hcpopsctl dev (pid") {
		t.Fatalf("the CLI did not find the running dev: store %q", conn.Name)
	}
	fe := frontend.New(s, clock.Real{}, uuid.NewString)
	opts := frontend.Options{Location: "eastus", TenantID: devTenantID, ClientID: devClientID}
	cl, err := fe.PutCluster(context.Background(), cliCluster("c1"), clusterSpec(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	np, err := fe.PutNodePool(context.Background(), cliCluster("c1")+"/nodePools/np1", nodePoolSpec(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{cl.Operation.Name(), np.Operation.Name()} {
		re := regexp.MustCompile(regexp.QuoteMeta(id) + `.*-> Succeeded`)
		out.Await(t, id+" to succeed in the live output", func(s string) bool { return re.MatchString(Unwrap(s)) })
	}
	curl := regexp.MustCompile(`(?m)^\s+(curl -s .*` + regexp.QuoteMeta(cl.Operation.Name()) + `\?api-version=[^']+')$`).FindStringSubmatch(out.String())
	if curl == nil {
		t.Fatalf("no curl printed for %s:\n%s", cl.Operation.Name(), out.String())
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("no sh to run the printed curl with: %v", err)
	}
	body, err := exec.Command("sh", "-c", curl[1]).Output()
	if err != nil {
		t.Fatalf("%s: %v", curl[1], err)
	}
	var st struct{ Name, Status string }
	if err := json.Unmarshal(body, &st); err != nil || st.Name != cl.Operation.Name() || st.Status != "Succeeded" {
		t.Errorf("the printed curl answered %s (%v)", body, err)
	}
}

// Lifecycle log lines written in dev carry the invocation that caused
// them, as in serve: both assemble the handler through functions.Register.
func TestDevLifecycleLinesCarryInvocationIDs(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	o.simDurations = ""
	if err := run(context.Background(), o, &out, &logs, map[string]string{}); err != nil {
		t.Fatalf("run: %v\n%s", err, logs.String())
	}
	dispatched := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "operation.dispatched" {
			continue
		}
		dispatched++
		if id, _ := rec["invocation_id"].(string); id == "" || rec["operation_id"] == nil {
			t.Errorf("lifecycle line without invocation or operation id: %s", line)
		}
		// dev taps its log with a handler around the one that adds the
		// id, and the functions wrap that again: still once a line.
		if n := strings.Count(line, `"invocation_id"`); n != 1 {
			t.Errorf("invocation_id %d times in one line: %s", n, line)
		}
	}
	if dispatched == 0 {
		t.Fatalf("no operation.dispatched lines in the logs:\n%s", logs.String())
	}
}

// A second dev on the same data dir names the first; one whose HTTP port
// is taken names the port and the flag. Neither says "interrupted".
func TestSecondDevNamesTheCause(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	h := startDev(t, o, &out, &logs)

	var out2, logs2 syncBuffer
	err := run(context.Background(), o, &out2, &logs2, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "is in use by hcpopsctl dev (pid ") || !strings.Contains(err.Error(), "-data-dir") {
		t.Errorf("second dev on the same data dir: %v", err)
	}

	o2 := fastOptions(t)
	o2.samples, o2.exitWhenDone = false, false
	o2.httpAddr = strings.TrimPrefix(h.FrontURL(), "http://")
	err = run(context.Background(), o2, &out2, &logs2, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), o2.httpAddr) || !strings.Contains(err.Error(), "-http-addr") {
		t.Errorf("second dev on a taken port: %v", err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("the cause is lost: %v", err)
	}
}

// A run that -timeout ends says so, and where its state stays, rather
// than stop silently.
func TestDevSaysWhyItStopped(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	o.samples, o.exitWhenDone, o.timeout = false, false, 2*time.Second
	if err := run(context.Background(), o, &out, &logs, map[string]string{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	want := "\nhcpopsctl dev stopped: -timeout 2s passed. State stays in " + o.dataDir + ": a new run follows what is still active.\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("a run -timeout ended printed\n%s\nwant it to end with %q", out.String(), want)
	}
}

// An idle dev prints nothing after it says it serves, tick after tick.
func TestIdleDevIsQuiet(t *testing.T) {
	var out, logs syncBuffer
	startDev(t, fastOptions(t), &out, &logs)
	// Three ticks of a real-time schedule, every second: what it checks is
	// that an idle dev stays quiet across them.
	logs.Await(t, "three poll ticks", func(s string) bool { return strings.Count(s, `"msg":"poll.tick"`) >= 3 })
	text := out.String()
	i := strings.Index(text, "serving;")
	if i < 0 {
		t.Fatalf("no serving line in\n%s", text)
	}
	if rest := strings.TrimSpace(text[i:]); strings.Count(rest, "\n") > 0 {
		t.Errorf("an idle dev printed more after serving:\n%s", rest)
	}
}

// A bad setting stops dev before it creates its data dir.
func TestDevChecksSettingsBeforeTheDisk(t *testing.T) {
	o := fastOptions(t)
	o.dataDir = filepath.Join(t.TempDir(), "data")
	var out, logs syncBuffer
	err := run(context.Background(), o, &out, &logs, map[string]string{"HCPOPS_DISPATCH_GRACE": "soon"})
	if err == nil || !strings.Contains(err.Error(), `HCPOPS_DISPATCH_GRACE="soon"`) {
		t.Fatalf("err = %v, want one naming the setting", err)
	}
	if _, err := os.Stat(o.dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data dir was created: %v", err)
	}
}
