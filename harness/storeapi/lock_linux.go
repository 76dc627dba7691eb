package storeapi

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LockHolder is the pid holding a flock on path according to /proc/locks,
// or 0: it names a holder that left no advert (a crashed run's survivor,
// an older hcpops, another tool).
func LockHolder(path string) int {
	pid, _ := lockHolder(path)
	return pid
}

// lockHolder reads /proc/locks; ok is false when it cannot be read.
func lockHolder(path string) (pid int, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, true // no file, no lock
	}
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	inode := ":" + strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF"
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !strings.HasSuffix(fields[5], inode) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid, true
		}
	}
	return 0, sc.Err() == nil
}

// holdsLock says whether pid holds path's flock: bbolt's on an embedded
// store, or the share's lock file, which only the serving process has.
// Without /proc/locks it can only tell that some process holds it.
func holdsLock(path string, pid int) error {
	holder, ok := lockHolder(path)
	if !ok {
		return probeLock(path)
	}
	switch holder {
	case pid:
		return nil
	case 0:
		return fmt.Errorf("pid %d does not hold the lock on %s (nothing does)", pid, path)
	}
	return fmt.Errorf("pid %d does not hold the lock on %s (pid %d does)", pid, path, holder)
}
