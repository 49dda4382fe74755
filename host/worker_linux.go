package host

import "syscall"

const workersSupported = true

// workerSysProcAttr puts a worker in a process group of its own, so that a
// terminal's signals reach only the parent, and has the kernel kill it if
// the parent dies without closing its pipe.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
