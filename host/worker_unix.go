//go:build unix && !linux

package host

import "syscall"

const workersSupported = true

// workerSysProcAttr puts a worker in a process group of its own, so that a
// terminal's signals reach only the parent. A worker whose parent dies
// sees its pipe close and exits.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
