//go:build linux

package host

import "syscall"

const (
	sysMemfdCreate = syscall.SYS_MEMFD_CREATE
	sysUserfaultfd = 282
)
