// Package testenv holds what skillhost's tests share across packages.
package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// StateDir is the state folder the tests share across packages and runs.
// Its cache subfolder holds compiled guest code: compiling a Go guest takes
// seconds, and far longer under the race detector. wazero keys cache
// entries by module, wazero version, CPU and interrupt mode, so sharing
// them is safe.
func StateDir() string { return filepath.Join(os.TempDir(), "skillhost-test-state") }

// CacheDir is the compilation cache inside StateDir.
func CacheDir() string { return filepath.Join(StateDir(), "cache") }

var moduleDirs sync.Map // module path → *moduleDirResult

type moduleDirResult struct {
	once sync.Once
	dir  string
	err  error
}

// ModuleDir returns the folder of a module the repository requires (at the
// version go.mod gives), downloading it into the module cache first when a
// fresh machine lacks it: `go list -m` only reports modules a build has
// already fetched, so a test that walks another module's files must not
// rely on it.
func ModuleDir(path string) (string, error) {
	v, _ := moduleDirs.LoadOrStore(path, &moduleDirResult{})
	r := v.(*moduleDirResult)
	r.once.Do(func() {
		out, err := exec.Command("go", "mod", "download", "-json", path).Output()
		if err != nil {
			r.err = fmt.Errorf("go mod download %s: %w", path, err)
			return
		}
		var m struct{ Dir, Error string }
		if err := json.Unmarshal(out, &m); err != nil {
			r.err = fmt.Errorf("go mod download %s: %w", path, err)
			return
		}
		if m.Dir == "" {
			r.err = fmt.Errorf("go mod download %s: no folder (%s)", path, m.Error)
			return
		}
		r.dir = m.Dir
	})
	return r.dir, r.err
}
