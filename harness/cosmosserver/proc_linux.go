package testserver

import "syscall"

// childAttrs makes the kernel kill the server if the test binary dies
// without running its cleanup (a panic, a timeout, a forgotten Main).
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
