//go:build !linux

package cosmostest

import "syscall"

func childAttrs() *syscall.SysProcAttr { return nil }
