// Command warmcache compiles every guest module of the repository (and the
// Extism go-sdk's test plugins) into the tests' shared compilation cache.
// `make test` runs it before the race-detector run: compiled without the
// race detector it takes seconds, inside race-instrumented tests minutes.
package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
)

func main() {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCacheDir(testenv.CacheDir()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "warmcache:", err)
		os.Exit(1)
	}
	defer h.Close(ctx)
	roots := []string{"."}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/extism/go-sdk").Output(); err == nil {
		roots = append(roots, filepath.Join(strings.TrimSpace(string(out)), "wasm"))
	}
	n := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "target") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".wasm") {
				return nil
			}
			wasm, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			// Modules the host refuses (the unknown-import fixtures) are
			// skipped: there is nothing to cache.
			if _, err := h.Load(ctx, wasm, host.LoadOptions{Name: path}); err == nil {
				n++
			}
			return nil
		})
	}
	fmt.Printf("warmcache: %d modules compiled into %s\n", n, testenv.CacheDir())
}
