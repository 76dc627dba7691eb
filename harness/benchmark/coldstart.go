package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/handlers"
)

// coldStartTimeout bounds one start; a healthy start takes milliseconds.
const coldStartTimeout = 20 * time.Second

// buildEnv is the environment go builds run in: a go on PATH older than
// go.mod wants builds with the toolchain that built this binary, unless the
// caller chose one with GOTOOLCHAIN.
func buildEnv() []string {
	if os.Getenv("GOTOOLCHAIN") != "" || !strings.HasPrefix(runtime.Version(), "go") {
		return nil // inherit
	}
	return append(os.Environ(), "GOTOOLCHAIN="+runtime.Version())
}

// buildBinaries builds hcpops as it ships (stripped, trimmed paths) and
// as `go build` leaves it, and returns the stripped one's path and both
// sizes.
func buildBinaries(ctx context.Context, goCmd, src, dir string) (string, int64, int64, error) {
	if src == "" {
		list := exec.CommandContext(ctx, goCmd, "list", "-m", "-f", "{{.Dir}}")
		list.Env = buildEnv()
		out, err := list.Output()
		if err != nil {
			return "", 0, 0, fmt.Errorf("finding the module directory (set -src): %w", err)
		}
		src = strings.TrimSpace(string(out))
	}
	stripped := filepath.Join(dir, "hcpops")
	unstripped := filepath.Join(dir, "hcpops-unstripped")
	builds := []struct {
		out  string
		args []string
	}{
		{stripped, []string{"-trimpath", "-ldflags=-s -w"}},
		{unstripped, nil},
	}
	sizes := make([]int64, len(builds))
	for i, b := range builds {
		args := append(append([]string{"build"}, b.args...), "-o", b.out, "./harness/cmd/hcpopsctl")
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir = src
		cmd.Env = buildEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return "", 0, 0, fmt.Errorf("%s %s in %s: %w: %s", goCmd, strings.Join(args, " "), src, err, tail(stderr.String()))
		}
		fi, err := os.Stat(b.out)
		if err != nil {
			return "", 0, 0, fmt.Errorf("built binary: %w", err)
		}
		sizes[i] = fi.Size()
	}
	return stripped, sizes[0], sizes[1], nil
}

// measureColdStart starts `bin serve` runs times and reports the time from
// exec to the first 200 on GET /, the host's readiness ping. extraEnv is
// added to the clean environment the server gets.
func measureColdStart(ctx context.Context, bin, csURL, dir string, runs int, extraEnv ...string) (*ColdStartFigures, error) {
	fig := &ColdStartFigures{Binary: bin, Runs: runs}
	for i := range runs {
		d, err := startOnce(ctx, bin, csURL, filepath.Join(dir, "data-"+strconv.Itoa(i)), extraEnv)
		if err != nil {
			return nil, fmt.Errorf("cold start run %d: %w", i+1, err)
		}
		fig.SamplesMS = append(fig.SamplesMS, ms(d))
	}
	s := slices.Clone(fig.SamplesMS)
	slices.Sort(s)
	fig.MinMS, fig.MaxMS = s[0], s[len(s)-1]
	fig.MedianMS = s[len(s)/2]
	if len(s)%2 == 0 {
		fig.MedianMS = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fig, nil
}

func startOnce(ctx context.Context, bin, csURL, dataDir string, extraEnv []string) (time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return 0, err
	}
	cmd := exec.Command(bin, "serve")
	// A clean environment: the process's own settings (a Cosmos connection,
	// say) must not change what is started.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		handlers.EnvCustomHandlerPort + "=" + strconv.Itoa(port),
		"HCPOPS_DATA_DIR=" + dataDir,
		ocm.EnvURL + "=" + csURL,
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	client := &http.Client{Timeout: time.Second}

	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer stopProcess(cmd, exited)
	deadline := t0.Add(coldStartTimeout)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(t0), nil
			}
		}
		select {
		case err := <-exited:
			exited <- err // for stopProcess
			return 0, fmt.Errorf("%s serve exited before answering: %v: %s", bin, err, tail(out.String()))
		case <-ctx.Done():
			return 0, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s serve did not answer GET / within %s: %s", bin, coldStartTimeout, tail(out.String()))
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// stopProcess interrupts the server (it shuts down gracefully on SIGINT)
// and kills it if it lingers.
func stopProcess(cmd *exec.Cmd, exited chan error) {
	_ = cmd.Process.Signal(os.Interrupt)
	// How it exited is the stop's doing, not a figure.
	select {
	case err := <-exited:
		_ = err
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		if err := <-exited; err != nil {
			fmt.Fprintln(os.Stderr, "bench: a server that lingered after SIGINT was killed:", err)
		}
	}
}
