//go:build unix

package benchmark

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// usage is the process's CPU time so far and its peak resident set.
type usage struct {
	User, Sys time.Duration
	// MaxRSS is the peak resident set in bytes: VmHWM where Linux has it,
	// else getrusage's maxrss.
	MaxRSS int64
	// RusageMaxRSS is getrusage's maxrss in bytes. On Linux a child started
	// by Go's fork+exec inherits its parent's high-water mark at exec
	// (the parent's address space is the one exec replaces), so for a
	// child this is at least the parent's peak; VmHWM belongs to the new
	// address space alone.
	RusageMaxRSS int64
}

func (u usage) cpu() time.Duration { return u.User + u.Sys }

func readUsage() (usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}, fmt.Errorf("getrusage: %w", err)
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" { // Linux and the BSDs report kilobytes
		rss *= 1024
	}
	u := usage{
		User:         time.Duration(ru.Utime.Nano()),
		Sys:          time.Duration(ru.Stime.Nano()),
		MaxRSS:       rss,
		RusageMaxRSS: rss,
	}
	if hwm, ok := vmHWM(); ok {
		u.MaxRSS = hwm
	}
	return u, nil
}

// vmHWM reads the peak resident set of this address space from
// /proc/self/status.
func vmHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "VmHWM:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}
