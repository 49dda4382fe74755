//go:build linux

package host

// System calls package syscall does not name on amd64.
const (
	sysMemfdCreate = 319
	sysUserfaultfd = 323
)
