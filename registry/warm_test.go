package registry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/registry"
)

func TestCompileModules(t *testing.T) {
	bad := writePack(t, "name: bad\nmodules:\n  - name: m\n    path: m.wasm\n    tools:\n      - {name: bad_run, export: run, description: Never compiles.}\n", "wat/bad_signature.wasm")
	reg, err := registry.New(context.Background(), catalog(t, writePack(t, testPack, "wat/tool_call.wasm"), bad),
		registry.Options{Host: newHost(t), Grants: map[string]host.Grant{"t": {Tools: []string{"again"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	n, failed, err := reg.CompileModules(context.Background(), func(name string, size int) func() {
		if size <= 0 {
			t.Errorf("%s: size %d", name, size)
		}
		shown = append(shown, name)
		return func() {}
	})
	if err != nil || n != 1 || len(failed) != 1 || !errors.Is(failed[0], host.ErrUnknownImport) {
		t.Fatalf("CompileModules: %d compiled, failed %v, %v; want 1 and one ErrUnknownImport", n, failed, err)
	}
	if len(shown) != 2 {
		t.Errorf("progress shown for %v, want both modules", shown)
	}
	// The tool of the module that did not compile fails as before.
	run := newRun(t, reg, registry.RunContext{}, nil)
	res, err := run.Call(context.Background(), "bad_run", nil, nil)
	if err != nil || !res.IsError {
		t.Errorf("bad_run: %+v, %v; want a tool error", res, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, _, err := reg.CompileModules(ctx, nil); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("with a done context: %d, %v; want 0 and Canceled", n, err)
	}
}
