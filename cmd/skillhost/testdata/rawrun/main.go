// Command rawrun calls an export of an Extism-style Wasm module in a bare
// wazero runtime, with no interruption check of any kind: the floor
// BenchmarkWholeProcess measures the skillhost binary against. It gives
// the guest WASI and the least of the Extism kernel a guest needs (input,
// alloc, loads and stores, output_set, error_set) and prints the output.
//
//	rawrun CACHE_DIR MODULE EXPORT INPUT
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rawrun:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: rawrun CACHE_DIR MODULE EXPORT INPUT")
	}
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(args[0])
	if err != nil {
		return err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	wasm, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return err
	}
	k := &kernel{input: []byte(args[3]), mem: make([]byte, 8), lens: map[uint64]uint64{}}
	if err := k.instantiate(ctx, rt, cm); err != nil {
		return err
	}
	mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().WithRandSource(rand.Reader))
	if err != nil {
		return err
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			return err
		}
	}
	fn := mod.ExportedFunction(args[2])
	if fn == nil {
		return fmt.Errorf("no export %q", args[2])
	}
	res, err := fn.Call(ctx)
	if err != nil {
		return err
	}
	if len(res) == 1 && res[0] != 0 {
		return fmt.Errorf("%s returned %d", args[2], res[0])
	}
	_, err = os.Stdout.Write(k.output)
	return err
}

type kernel struct {
	input, mem, output []byte
	lens               map[uint64]uint64
}

func (k *kernel) instantiate(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule) error {
	le := binary.LittleEndian
	impl := map[string]api.GoFunc{
		"input_length":   func(_ context.Context, s []uint64) { s[0] = uint64(len(k.input)) },
		"input_load_u8":  func(_ context.Context, s []uint64) { s[0] = uint64(k.input[s[0]]) },
		"input_load_u64": func(_ context.Context, s []uint64) { s[0] = le.Uint64(k.input[s[0]:]) },
		"alloc": func(_ context.Context, s []uint64) {
			off := uint64(len(k.mem))
			k.mem = append(k.mem, make([]byte, (s[0]+7)&^7)...)
			k.lens[off] = s[0]
			s[0] = off
		},
		"length":     func(_ context.Context, s []uint64) { s[0] = k.lens[s[0]] },
		"load_u8":    func(_ context.Context, s []uint64) { s[0] = uint64(k.mem[s[0]]) },
		"load_u64":   func(_ context.Context, s []uint64) { s[0] = le.Uint64(k.mem[s[0]:]) },
		"store_u8":   func(_ context.Context, s []uint64) { k.mem[s[0]] = byte(s[1]) },
		"store_u64":  func(_ context.Context, s []uint64) { le.PutUint64(k.mem[s[0]:], s[1]) },
		"output_set": func(_ context.Context, s []uint64) { k.output = k.mem[s[0] : s[0]+s[1]] },
		"error_set":  func(_ context.Context, s []uint64) {},
	}
	builders := map[string]wazero.HostModuleBuilder{}
	seen := map[string]bool{}
	for _, def := range cm.ImportedFunctions() {
		mod, name, _ := def.Import()
		if mod == wasi_snapshot_preview1.ModuleName || seen[mod+"."+name] {
			continue
		}
		seen[mod+"."+name] = true
		hb, ok := builders[mod]
		if !ok {
			hb = rt.NewHostModuleBuilder(mod)
			builders[mod] = hb
		}
		fn, ok := impl[name]
		if !ok || mod != "extism:host/env" {
			n := len(def.ResultTypes())
			fn = func(_ context.Context, s []uint64) { clear(s[:n]) }
		}
		hb.NewFunctionBuilder().WithGoFunction(fn, def.ParamTypes(), def.ResultTypes()).Export(name)
	}
	for _, hb := range builders {
		if _, err := hb.Instantiate(ctx); err != nil {
			return err
		}
	}
	return nil
}
