// Package npm installs the node tools the tests run (the Cosmos DB test
// server, the KQL checker) from their lock files, once per machine.
package npm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Timeout bounds one npm ci: a cold cache on a slow registry link.
const Timeout = 10 * time.Minute

// CI runs `npm ci` in dir unless marker (a path under dir, e.g. the pinned
// package's package.json) exists. A lock file named after lockName
// serialises the test binaries of several packages that start at once.
func CI(ctx context.Context, dir, marker, lockName string) error {
	installed := func() bool {
		_, err := os.Stat(filepath.Join(dir, marker))
		return err == nil
	}
	if installed() {
		return nil
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "hcpops-"+lockName+"-npm.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("opening npm lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking npm lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	if installed() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out[max(0, len(out)-4000):])
	}
	return nil
}
