package triggerhost

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// helperEnv makes the test binary act as an external custom handler.
const helperEnv = "TRIGGERHOST_TEST_HANDLER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperHandler())
	}
	os.Exit(m.Run())
}

// helperHandler is a minimal custom handler process: it listens where the
// host said and echoes what it was started with in each invocation's Logs.
func helperHandler() int {
	port := os.Getenv("FUNCTIONS_CUSTOMHANDLER_PORT")
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cwd, _ := os.Getwd()
	logs := []string{
		"port=" + port,
		"worker=" + os.Getenv("FUNCTIONS_CUSTOMHANDLER_WORKER_ID"),
		"root=" + os.Getenv("FUNCTIONS_APP_ROOT_PATH"),
		"cwd=" + cwd,
		"args=" + strings.Join(os.Args[1:], " "),
	}
	body, _ := json.Marshal(map[string]any{"Outputs": map[string]any{}, "Logs": logs, "ReturnValue": nil})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	go func() {
		<-stop
		fmt.Println("helper handler stopping on SIGTERM")
		_ = srv.Close()
	}()
	fmt.Println("helper handler listening")
	_ = srv.Serve(ln)
	return 0
}

func TestCommandRunsAndRestartsTheHandlerProcess(t *testing.T) {
	testsupport.RealStack(t, "the test binary as a custom handler child process")
	exe, err := os.Executable()
	must(t, err)
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "host.json"), []byte(fmt.Sprintf(
		`{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":%q,"arguments":["serve","--greeting=%%GREETING%%"]}}}`, exe)), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "tick"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "tick", "function.json"), []byte(timerFunction("0 * * * * *", "")), 0o644))
	app, err := functionapp.Load(root, functionapp.Settings(map[string]string{"GREETING": "hi"}))
	must(t, err)

	var logs syncLog
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cmd, err := CommandFromApp(app, functionapp.Settings(map[string]string{"GREETING": "hi"}), append(os.Environ(), helperEnv+"=1"), logger)
	must(t, err)
	sup, err := NewSupervisor(cmd, 0, logger)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("supervisor: %v", err)
		}
	}()

	iv := newInvoker(sup, clock.Real{}, DefaultHostVersion, 0, logger)
	invoke := func() map[string]string {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		res, err := iv.Invoke(wctx, "tick", map[string]json.RawMessage{"myTimer": json.RawMessage(`{}`)}, nil)
		must(t, err)
		got := map[string]string{}
		for _, l := range res.Logs {
			k, v, _ := strings.Cut(l, "=")
			got[k] = v
		}
		return got
	}
	first := invoke()
	absRoot, _ := filepath.Abs(root)
	want := map[string]string{"port": fmt.Sprint(sup.Port()), "root": absRoot, "cwd": root, "args": "serve --greeting=hi"}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("handler saw %s=%q, want %q", k, first[k], v)
		}
	}
	if !uuidRE.MatchString(first["worker"]) {
		t.Errorf("worker id %q is not a GUID", first["worker"])
	}

	sup.Restart()
	awaitStarts(t, sup, 2)
	second := invoke()
	if second["worker"] == first["worker"] || second["port"] != first["port"] {
		t.Errorf("after a restart: worker %s -> %s, port %s -> %s; want a new worker on the same port",
			first["worker"], second["worker"], first["port"], second["port"])
	}
	if n := strings.Count(logs.String(), "helper handler listening"); n != 2 {
		t.Errorf("the handler's output reached the log %d times, want 2 (one per process)", n)
	}
}

func TestCommandStopSignal(t *testing.T) {
	testsupport.RealStack(t, "the test binary as a custom handler child process")
	exe, err := os.Executable()
	must(t, err)
	tests := []struct {
		name     string
		signal   os.Signal
		graceful bool
	}{
		{"default is SIGTERM", nil, true},
		{"SIGKILL is a crash", syscall.SIGKILL, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncLog
			cmd := Command{Path: exe, Dir: t.TempDir(), Env: append(os.Environ(), helperEnv+"=1"),
				Logger: slog.New(slog.NewTextHandler(&logs, nil)), StopSignal: tc.signal}
			port, err := FreePort()
			must(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- cmd.Run(ctx, port) }()
			logs.AwaitText(t, "helper handler listening")
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run after a stop = %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler process did not stop within 10s")
			}
			if got := strings.Contains(logs.String(), "stopping on SIGTERM"); got != tc.graceful {
				t.Errorf("handler ran its SIGTERM shutdown: %v, want %v; log:\n%s", got, tc.graceful, logs.String())
			}
		})
	}
}

func TestCommandFromAppRefusesMissingExecutables(t *testing.T) {
	tests := []struct{ name, host, want string }{
		{"no custom handler", `{"version":"2.0"}`, "defaultExecutablePath"},
		{"missing executable", `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"no-such-handler-xyz"}}}`, `"no-such-handler-xyz"`},
		{"unset argument", `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["%MISSING%"]}}}`, "arguments[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := writeApp(t, tc.host, map[string]string{"tick": timerFunction("0 * * * * *", "")})
			_, err := CommandFromApp(app, functionapp.Settings(), nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %s", err, tc.want)
			}
		})
	}
}

// syncLog is a log destination safe for the supervisor's goroutines.
type syncLog = testsupport.Buffer
