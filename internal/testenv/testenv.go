// Package testenv holds what skillhost's tests share across packages.
package testenv

import (
	"os"
	"path/filepath"
)

// StateDir is the state folder the tests share across packages and runs.
// Its cache subfolder holds compiled guest code: compiling a Go guest takes
// seconds, and far longer under the race detector. wazero keys cache
// entries by module, wazero version, CPU and interrupt mode, so sharing
// them is safe.
func StateDir() string { return filepath.Join(os.TempDir(), "skillhost-test-state") }

// CacheDir is the compilation cache inside StateDir.
func CacheDir() string { return filepath.Join(StateDir(), "cache") }
