package packs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
)

// A bundled module built with TinyGo behaves as the standard Go build does:
// the same describe output and the same results. Runs where TinyGo is
// installed (make tinygo).
func TestTinyGoBuildOfBundledModule(t *testing.T) {
	tinygo, err := exec.LookPath("tinygo")
	if err != nil {
		t.Skip("tinygo is not installed; `make tinygo` installs it")
	}
	if testing.Short() {
		t.Skip("building with TinyGo takes tens of seconds")
	}
	out := filepath.Join(t.TempDir(), "text.wasm")
	cmd := exec.Command(tinygo, "build", "-target=wasip1", "-buildmode=c-shared", "-scheduler=none", "-no-debug", "-o", out, ".")
	cmd.Dir = filepath.Join("bundled", "modules", "text")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tinygo build: %v\n%s", err, b)
	}
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCacheDir(testenv.CacheDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	load := func(path string) *host.Module {
		wasm, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := h.Load(ctx, wasm, host.LoadOptions{Name: path})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tiny, std := load(out), load(filepath.Join("bundled", "modules", "text", "text.wasm"))
	dt, err := tiny.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := std.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ds, dt); d != "" {
		t.Errorf("describe (-standard Go +TinyGo)\n%s", d)
	}
	for _, c := range []struct{ export, input string }{
		{"slugify", `{"text":"Hello, Wörld!"}`},
		{"case_convert", `{"text":"parseHTTPResponse","to":"kebab"}`},
		{"word_count", `{"text":"a b b c c c"}`},
		{"slugify", `{"text":5}`},
	} {
		rt, errT := tiny.Call(ctx, c.export, []byte(c.input), nil)
		rs, errS := std.Call(ctx, c.export, []byte(c.input), nil)
		if string(rt.Output) != string(rs.Output) || (errT == nil) != (errS == nil) {
			t.Errorf("%s(%s): TinyGo %q, %v; standard Go %q, %v", c.export, c.input, rt.Output, errT, rs.Output, errS)
		}
	}
}
