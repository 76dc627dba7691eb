//go:build !linux

package testserver

import "syscall"

func childAttrs() *syscall.SysProcAttr { return nil }
