// Package testserver runs the local Cosmos-compatible test server
// (tools/cosmos-test-server): for tests through package cosmostest, and
// for the Cosmos scenario of hcpopsctl bench, which must not link the
// testing package into the shipped binary.
package testserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/harness/npm"
)

// EmulatorKey is the Cosmos DB emulator's published, well-known key. The test
// server checks no signature; the SDK only needs valid base64.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

const (
	readyTimeout   = 30 * time.Second
	startAttempts  = 3
	serverScript   = "cosmos-test-server.js"
	serverPackage  = "node_modules/@vercel/cosmosdb-server/package.json"
	toolsDirectory = "tools/cosmos-test-server"
)

// Server is one running test server process.
type Server struct {
	// Endpoint is the URL of the server, e.g. https://127.0.0.1:40123/
	// (http:// with Options.NoSSL).
	Endpoint string
	// CAFile is the PEM file of the CA the server's certificate was
	// signed with at start (https only): trust it instead of skipping
	// verification.
	CAFile string
	// IdentityEndpoint and IdentityHeader are the local managed-identity
	// endpoint's IDENTITY_ENDPOINT and IDENTITY_HEADER (Options.Identity).
	IdentityEndpoint, IdentityHeader string
	cmd                              *exec.Cmd
	exited                           chan struct{}
	logPath                          string
}

// Dir finds tools/cosmos-test-server by walking up from the working
// directory to the module root (the directory holding go.mod).
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, toolsDirectory), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Install runs npm ci in dir unless the pinned package is already there.
// A lock file serialises test binaries that start at once.
func Install(ctx context.Context, dir string) error {
	return npm.CI(ctx, dir, serverPackage, "cosmos-test-server")
}

// Options choose how the server listens.
type Options struct {
	// NoSSL serves plain http (--no-ssl), as the emulator's http mode does;
	// the Endpoint is then http://.
	NoSSL bool
	// Port is the port to listen on; 0 picks a free one.
	Port int
	// Identity also runs a local managed-identity endpoint in App
	// Service's shape (--identity-port); the server then accepts the AAD
	// tokens it mints and refuses any other. https only.
	Identity bool
}

// Start starts the wrapper in dir on a free loopback port over https and
// waits until GET / answers 200.
func Start(ctx context.Context, dir string) (*Server, error) { return StartWith(ctx, dir, Options{}) }

// StartWith starts the wrapper as o says and waits until GET / answers
// 200. Free ports are picked by probing, so a lost race is retried on
// another port.
func StartWith(ctx context.Context, dir string, o Options) (*Server, error) {
	var errs []error
	for range startAttempts {
		s, err := startOnce(ctx, dir, o)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || o.Port != 0 {
			break
		}
	}
	return nil, fmt.Errorf("starting cosmos test server: %w", errors.Join(errs...))
}

func startOnce(ctx context.Context, dir string, o Options) (*Server, error) {
	port := o.Port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	logFile, err := os.CreateTemp("", "cosmos-test-server-*.log")
	if err != nil {
		return nil, fmt.Errorf("creating server log: %w", err)
	}
	defer logFile.Close()
	// Start node itself (not npx) so the pid we kill is the server's.
	args := []string{serverScript, "-p", strconv.Itoa(port), "--host", "127.0.0.1", "--keep-alive"}
	scheme := "https"
	if o.NoSSL {
		args, scheme = append(args, "--no-ssl"), "http"
	}
	if o.Identity {
		args = append(args, "--identity-port", "0")
	}
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running node %s: %w", serverScript, err)
	}
	s := &Server{
		Endpoint: fmt.Sprintf("%s://127.0.0.1:%d/", scheme, port),
		cmd:      cmd,
		exited:   make(chan struct{}),
		logPath:  logFile.Name(),
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, s.Log())
	}
	if err := s.readAnnouncements(o); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, s.Log())
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	client := &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			Proxy:           nil,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback test server
		},
	}
	defer client.CloseIdleConnections()
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server exited before it was ready (%v)", s.cmd.ProcessState)
		case <-deadline.C:
			return fmt.Errorf("server at %s not ready after %s", s.Endpoint, readyTimeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// readAnnouncements reads the CA file and the identity endpoint from the
// lines the server printed before it listened.
func (s *Server) readAnnouncements(o Options) error {
	out, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Errorf("reading the server's log: %w", err)
	}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "cosmos-test-server ready at "); ok {
			if _, ca, found := strings.Cut(rest, " ca="); found {
				s.CAFile = ca
			}
		}
		if rest, ok := strings.CutPrefix(line, "cosmos-test-server identity endpoint at "); ok {
			s.IdentityEndpoint, s.IdentityHeader, _ = strings.Cut(rest, " header=")
		}
	}
	switch {
	case !o.NoSSL && s.CAFile == "":
		return errors.New("the server named no CA file")
	case o.Identity && (s.IdentityEndpoint == "" || s.IdentityHeader == ""):
		return errors.New("the server named no identity endpoint")
	}
	return nil
}

// Exited reports whether the server process has ended (crashed, if nobody
// stopped it).
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// Stop kills the server process and waits for it to exit.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing cosmos test server pid %d: %w", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("cosmos test server pid %d did not exit", s.cmd.Process.Pid)
	}
	_ = os.Remove(s.logPath)
	return nil
}

// Log returns the tail of the server's output, for failure messages.
func (s *Server) Log() string {
	out, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tail(out, 4000)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	var sb strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sb.WriteString("  | ")
		sb.WriteString(sc.Text())
		sb.WriteByte('\n')
	}
	return sb.String()
}
