package testenv_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
)

// refused are the fixtures the host must refuse to load.
var refused = map[string]bool{
	"unknown_import.wasm":   true,
	"unknown_env_func.wasm": true,
	"bad_signature.wasm":    true,
	"fuel_import.wasm":      true,
}

// TestEveryModuleLoads compiles every guest module of the repository and the
// Extism go-sdk's test plugins into the tests' shared cache. `make test` runs
// it alone before the race-detector run, which then finds the code compiled:
// compiling inside race-instrumented tests takes minutes. (The cache is
// keyed by wazero's version as a binary sees it, and test binaries see
// another than `go run` does, so this is a test.)
func TestEveryModuleLoads(t *testing.T) {
	ctx := context.Background()
	// Every form: the rewritten, metered one (counting fuel, and with the
	// tick check), and the original the tests also run under
	// close-on-context-done.
	var hosts []*host.Host
	for _, metered := range []bool{true, false} {
		h, err := host.New(ctx, host.NewConfig().WithCacheDir(testenv.CacheDir()).WithMetering(metered))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(ctx)
		hosts = append(hosts, h)
	}
	roots := []string{filepath.Join("..", "..")}
	sdk, err := testenv.ModuleDir("github.com/extism/go-sdk")
	if err != nil {
		t.Fatalf("locating the extism go-sdk module: %v", err)
	}
	roots = append(roots, filepath.Join(sdk, "wasm"))
	n := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "target" || d.Name() == "fuzz") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".wasm") {
				return nil
			}
			wasm, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, h := range hosts[1:] {
				h.Load(ctx, wasm, host.LoadOptions{Name: path})
			}
			// The metered host makes the module with the tick check too.
			m, err := hosts[0].Load(ctx, wasm, host.LoadOptions{Name: path})
			if err == nil {
				m.PrepareTickCheck()
			}
			switch {
			case refused[d.Name()] && err == nil:
				t.Errorf("%s loaded; the host must refuse it", path)
			case !refused[d.Name()] && err != nil && !strings.Contains(path, "go-sdk"):
				t.Errorf("%s: %v", path, err)
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 20 {
		t.Errorf("found only %d modules", n)
	}
}
