//go:build !unix

package host

import "syscall"

// Worker processes inherit their pipes as descriptors 3 and 4, which
// needs a unix system.
const workersSupported = false

func workerSysProcAttr() *syscall.SysProcAttr { return nil }
