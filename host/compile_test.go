package host

import (
	"context"
	"os"
	"testing"
)

// A module compiles once per content hash: loading the same bytes again
// shares the compiled code; different bytes compile anew.
func TestCompileOncePerHash(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	echo, err := os.ReadFile("../testdata/guests/wat/echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	loop, err := os.ReadFile("../testdata/guests/wat/loop.wasm")
	if err != nil {
		t.Fatal(err)
	}
	a, err := h.Load(ctx, echo, LoadOptions{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Load(ctx, append([]byte(nil), echo...), LoadOptions{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.c != b.c {
		t.Error("the same bytes were compiled twice")
	}
	if a.Name() != "a" || b.Name() != "b" || a.SHA256() != b.SHA256() {
		t.Errorf("names %q %q, digests %s %s", a.Name(), b.Name(), a.SHA256(), b.SHA256())
	}
	c, err := h.Load(ctx, loop, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.c == a.c || len(h.compiled) != 2 {
		t.Errorf("different bytes shared code, or %d compiled modules (want 2)", len(h.compiled))
	}
}

// A compilation cache folder is filled on first use and read by a second
// host, so a later process skips compiling.
func TestCompilationCacheDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	echo, err := os.ReadFile("../testdata/guests/wat/echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		h, err := New(ctx, NewConfig().WithCacheDir(dir))
		if err != nil {
			t.Fatal(err)
		}
		m, err := h.Load(ctx, echo, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Call(ctx, "echo", []byte("x"), nil)
		if err != nil || string(res.Output) != "x" {
			t.Fatalf("host %d: %q, %v", i, res.Output, err)
		}
		h.Close(ctx)
		entries, _ := os.ReadDir(dir)
		if len(entries) == 0 {
			t.Fatalf("host %d left the cache folder empty", i)
		}
	}
}
