//go:build unix

package install

import (
	"fmt"
	"os"
	"syscall"
)

// flock takes an exclusive lock on file, waiting for another install to
// finish, and returns its release.
func flock(file string) (func(), error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("install: locking %s: %w", file, err)
	}
	return func() { f.Close() }, nil
}
