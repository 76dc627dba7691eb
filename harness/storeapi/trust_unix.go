//go:build unix

package storeapi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// readTrusted reads the advert at path only if the current user wrote it
// for itself: a regular file (no symlink followed), owned by the
// effective user, readable by nobody else. The checks and the read use
// one open file, so the file cannot be swapped between them.
func readTrusted(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := checkAdvertFile(path, fi, os.Geteuid()); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, maxAdvertBytes))
}

// checkAdvertFile refuses an advert another user could have written or
// anyone else could read (the token in it is the key to the store).
func checkAdvertFile(path string, fi fs.FileInfo, uid int) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): refusing it", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is not owner-only (mode %#o, want 0600): refusing it", path, perm)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return fmt.Errorf("%s: its owner cannot be read: refusing it", path)
	}
	if int(st.Uid) != uid {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d): refusing it", path, st.Uid, uid)
	}
	return nil
}

// processAlive says whether pid runs as a process of this user.
func processAlive(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d is not a process id", pid)
	}
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("pid %d is another user's process", pid)
	}
	return fmt.Errorf("pid %d is not running", pid)
}

// probeLock says whether some process holds path's flock, by trying a
// shared lock without waiting (and dropping it at once if it is free).
func probeLock(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("the store file %s: %w", path, err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil
	}
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return fmt.Errorf("nothing holds the store file %s", path)
	}
	return fmt.Errorf("checking the lock of %s: %w", path, err)
}

// takeLock takes an exclusive flock on path (created owner-only) without
// waiting; release drops it. Another process holding it is an error.
func takeLock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another process holds %s: it shares a store from this data dir already", path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { _ = f.Close() }, nil
}
