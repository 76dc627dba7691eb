package triggerhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

// commandStopGrace is how long a handler process has to exit after
// SIGTERM before it is killed.
const commandStopGrace = 10 * time.Second

// Command runs the custom handler as a child process, the way the host runs
// host.json's customHandler.description: the port and worker id arrive in
// environment variables, output goes to the host's log.
type Command struct {
	Path    string
	Args    []string
	Dir     string
	AppRoot string
	// Env is the base environment; the host's variables are added to it.
	Env    []string
	Logger *slog.Logger
	// StopSignal is sent when the handler is stopped; nil means SIGTERM,
	// as the host sends. SIGKILL makes every stop (a Supervisor.Restart
	// included) a crash: no shutdown code runs and in-flight requests die,
	// which is what soak tests want to survive.
	StopSignal os.Signal
}

// CommandFromApp builds the command host.json describes. A relative
// executable that exists under the app root is taken from there, anything
// else from PATH; arguments may use %SETTING%.
func CommandFromApp(app *functionapp.App, lookup functionapp.LookupFunc, environ []string, logger *slog.Logger) (Command, error) {
	ch := app.Host.CustomHandler
	if ch == nil || ch.DefaultExecutablePath == "" {
		return Command{}, errors.New("host.json has no customHandler.description.defaultExecutablePath")
	}
	path := ch.DefaultExecutablePath
	if !filepath.IsAbs(path) {
		if local := filepath.Join(app.Root, path); isFile(local) {
			path = local
		} else if found, err := exec.LookPath(path); err == nil {
			path = found
		} else {
			return Command{}, fmt.Errorf("customHandler executable %q is neither under %s nor on PATH", ch.DefaultExecutablePath, app.Root)
		}
	}
	args := make([]string, len(ch.Arguments))
	for i, a := range ch.Arguments {
		v, err := functionapp.Expand(a, lookup)
		if err != nil {
			return Command{}, fmt.Errorf("customHandler arguments[%d]: %w", i, err)
		}
		args[i] = v
	}
	dir := app.Root
	if wd := ch.WorkingDirectory; wd != "" {
		dir = wd
		if !filepath.IsAbs(wd) {
			dir = filepath.Join(app.Root, wd)
		}
	}
	root, err := filepath.Abs(app.Root)
	if err != nil {
		return Command{}, fmt.Errorf("app root %s: %w", app.Root, err)
	}
	return Command{Path: path, Args: args, Dir: dir, AppRoot: root, Env: environ, Logger: logger}, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Run starts the process and waits for it. Cancelling ctx sends StopSignal
// (SIGTERM), then kills the process if it has not exited within
// commandStopGrace.
func (c Command) Run(ctx context.Context, port int) error {
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	workerID := uuid.NewString()
	cmd.Env = append(append([]string{}, c.Env...),
		"FUNCTIONS_CUSTOMHANDLER_PORT="+strconv.Itoa(port),
		"FUNCTIONS_HTTPWORKER_PORT="+strconv.Itoa(port),
		"FUNCTIONS_CUSTOMHANDLER_WORKER_ID="+workerID,
		"FUNCTIONS_HTTPWORKER_ID="+workerID,
		"FUNCTIONS_APP_ROOT_PATH="+c.AppRoot,
	)
	stop := c.StopSignal
	if stop == nil {
		stop = syscall.SIGTERM
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(stop) }
	cmd.WaitDelay = commandStopGrace
	attrs := []slog.Attr{slog.String("worker_id", workerID), slog.String("handler", filepath.Base(c.Path))}
	out := &lineLogger{ctx: context.WithoutCancel(ctx), logger: logger, attrs: attrs}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", c.Path, err)
	}
	err := cmd.Wait()
	out.flush()
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("custom handler %s: %w", c.Path, err)
	}
	return errors.New("custom handler process exited")
}

// lineLogger logs a child's output line by line. exec copies both streams
// into it from separate goroutines.
type lineLogger struct {
	ctx    context.Context
	logger *slog.Logger
	attrs  []slog.Attr

	mu  sync.Mutex
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.logger.LogAttrs(l.ctx, slog.LevelInfo, string(bytes.TrimRight(l.buf[:i], "\r")), l.attrs...)
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *lineLogger) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.logger.LogAttrs(l.ctx, slog.LevelInfo, string(l.buf), l.attrs...)
		l.buf = nil
	}
}
