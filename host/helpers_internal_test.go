package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// internalModule makes a host of cfg, closed when the test ends, and
// loads the test guest rel (a path under testdata/guests) into it.
func internalModule(t *testing.T, cfg Config, rel string) (*Host, *Module) {
	t.Helper()
	ctx := context.Background()
	h, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", rel))
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Load(ctx, wasm, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h, m
}
