package rewrite

import (
	"context"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
)

func TestZZDump(t *testing.T) {
	if os.Getenv("ZZ_DUMP") == "" {
		t.Skip()
	}
	wasm, _ := os.ReadFile("../../../testdata/guests/go/gobench/gobench.wasm")
	tick := os.Getenv("ZZ_DUMP") == "tick"
	out, _, err := Instrument(wasm, Options{ExportGlobals: true, Tick: tick})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	if _, err := r.CompileModule(ctx, out); err != nil {
		t.Fatal(err)
	}
}
