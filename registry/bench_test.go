package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// BenchmarkRunCall measures what a run adds to a call (visibility,
// argument validation, result normalisation, events) over a direct call of
// the same tiny tool on its host module.
func BenchmarkRunCall(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	dir := b.TempDir()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "tool_call.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "m.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(testPack), 0o644)
	cat, err := packs.LoadCatalog(ctx, []packs.SourceSpec{{Name: packs.SourceInstalled, Dir: dir}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(ctx, cat, registry.Options{Host: h, Events: registry.SinkFunc(func(context.Context, registry.Event) {})})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"text":"hello","n":3}`)
	b.Run("path=host-direct", func(b *testing.B) {
		m, err := h.Load(ctx, wasm, host.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tool, _ := reg.Tool("echo_args")
		opts := &host.CallOptions{Grant: tool.Effective}
		if _, err := m.Call(ctx, "echo_args", args, opts); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Call(ctx, "echo_args", args, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=run", func(b *testing.B) {
		run, err := reg.NewRun(registry.RunContext{Tenant: "t"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := run.Call(ctx, "echo_args", args, nil); err != nil { // compiles the module
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if res, err := run.Call(ctx, "echo_args", args, nil); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
}

// nop is a native tool that does nothing.
type nop struct{ name string }

func (n nop) Describe() packs.ToolSpec {
	return packs.ToolSpec{Name: n.name, Description: "Does nothing.", Loading: packs.LoadingDeferred}
}
func (nop) Execute(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage("null"), nil
}

// BenchmarkNewRun measures starting a run over a registry of 10,000 tools:
// a run copies nothing of the catalog.
func BenchmarkNewRun(b *testing.B) {
	natives := make([]registry.Native, 10_000)
	for i := range natives {
		natives[i] = nop{fmt.Sprintf("tool_%05d", i)}
	}
	reg, err := registry.New(context.Background(), nil, registry.Options{Natives: natives})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.NewRun(registry.RunContext{Tenant: "t", Session: "s"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuiltinCall measures what a built-in's deadline (builtinTool:
// a timer and a goroutine per call) adds to a call: the same tool called
// as a native tool and as a built-in, in one run.
func BenchmarkBuiltinCall(b *testing.B) {
	reg, err := registry.New(context.Background(), nil, registry.Options{
		Natives: []registry.Native{nop{"as_native"}}, Builtins: []registry.Native{nop{"as_builtin"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{Tenant: "t"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"native", "builtin"} {
		b.Run("kind="+kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res, err := run.Call(context.Background(), "as_"+kind, nil, nil); err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
