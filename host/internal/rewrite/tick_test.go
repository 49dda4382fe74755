package rewrite

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// globalsModule names globals everywhere one can be named: code
// (global.get and global.set), global initialisers (extended constant
// expressions included), element and data offsets, exports and the name
// section. Globals: 0 env.base (imported, 16), 1 a = base (mutable), 2 b =
// 7 (i64, exported), 3 c = 5 (mutable, exported), 4 d = base + 4
// (exported). run adds 1 to c ten times in a loop and returns a +
// memory[base] (42) + table[base]() (9) + c + b = 89.
var globalsModule = func() []byte {
	run := []byte{
		0x02, 0x40, 0x03, 0x40, // block, loop
		0x20, 0x00, 0x41, 10, 0x4e, 0x0d, 0x01, // local 0 >= 10: br_if 1
		0x23, 0x03, 0x41, 0x01, 0x6a, 0x24, 0x03, // c++
		0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, // local 0 ++
		0x0c, 0x00, 0x0b, 0x0b, // br 0, end, end
		0x23, 0x01, // a
		0x41, 16, 0x2d, 0x00, 0x00, 0x6a, // + memory[16]
		0x23, 0x00, 0x11, 0x00, 0x00, 0x6a, // + table[base]()
		0x23, 0x03, 0x6a, // + c
		0x23, 0x02, 0xa7, 0x6a, // + b
		0x0b,
	}
	names := vec(cat(u32(1), str("a")), cat(u32(3), str("c")))
	return mod(
		sec(secType, vec(functype(nil, []byte{0x7f}))),
		sec(secImport, vec(cat(str("env"), str("base"), []byte{0x03, 0x7f, 0x00}))),
		sec(secFunction, vec(u32(0), u32(0))),
		sec(secTable, vec([]byte{0x70, 0x00, 20})),
		sec(secMemory, vec([]byte{0x00, 0x01})),
		sec(secGlobal, vec(
			[]byte{0x7f, 0x01, 0x23, 0x00, 0x0b},                   // a = base
			[]byte{0x7e, 0x00, 0x42, 0x07, 0x0b},                   // b = 7
			[]byte{0x7f, 0x01, 0x41, 0x05, 0x0b},                   // c = 5
			[]byte{0x7f, 0x00, 0x23, 0x00, 0x41, 0x04, 0x6a, 0x0b}, // d = base + 4
		)),
		sec(secExport, vec(funcExport("run", 1), cat(str("b"), []byte{0x03, 0x02}),
			cat(str("c"), []byte{0x03, 0x03}), cat(str("d"), []byte{0x03, 0x04}))),
		sec(secElement, vec(cat([]byte{0x00, 0x23, 0x00, 0x0b}, vec(u32(0))))), // f at base
		sec(secCode, vec(body(nil, 0, 0x41, 9, 0x0b), body(cat(u32(1), []byte{0x7f}), 1, run...))),
		sec(secData, vec(cat([]byte{0x00, 0x23, 0x00, 0x0b}, u32(1), []byte{42}))), // 42 at base
		sec(secCustom, str("name"), []byte{0x07}, u32(uint32(len(names))), names),
	)
}()

// tickHost instantiates the tick flag and the tick function in r, and the
// env module globalsModule imports; the flag starts at flag. The tick
// function returns the flag when ack is set (the module calls again when
// the flag changes), else 0 (at its next check).
func tickHost(t *testing.T, ctx context.Context, r wazero.Runtime, flag uint64, ack bool, calls *atomic.Int64) api.MutableGlobal {
	t.Helper()
	var g api.MutableGlobal
	_, err := r.NewHostModuleBuilder(DefaultImportModule).NewFunctionBuilder().
		WithFunc(func(context.Context) int64 {
			calls.Add(1)
			if ack {
				return int64(g.Get())
			}
			return 0
		}).Export(DefaultTickImportName).
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := r.InstantiateWithConfig(ctx, mod(
		sec(secGlobal, vec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})),
		sec(secExport, vec(cat(str(TickGlobal), []byte{0x03, 0x00}))),
	), wazero.NewModuleConfig().WithName(TickModule))
	if err != nil {
		t.Fatal(err)
	}
	g = tm.ExportedGlobal(TickGlobal).(api.MutableGlobal)
	g.Set(flag)
	_, err = r.InstantiateWithConfig(ctx, mod(
		sec(secGlobal, vec([]byte{0x7f, 0x00, 0x41, 16, 0x0b})),
		sec(secExport, vec(cat(str("base"), []byte{0x03, 0x00}))),
	), wazero.NewModuleConfig().WithName("env"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestTickRenumbersGlobals runs globalsModule as it is and rewritten with
// Options.Tick, with the flag set (every check calls the host) and clear.
func TestTickRenumbersGlobals(t *testing.T) {
	ctx := context.Background()
	out, info, err := Instrument(globalsModule, Options{ExportGlobals: true, Tick: true})
	if err != nil {
		t.Fatal(err)
	}
	wantInfo := Info{
		Tick: true, TickGlobal: 1, SeenGlobal: 6, RefuelFunc: 0, Checks: 3,
		Globals: []GlobalExport{
			{Index: 1, Export: GlobalExportPrefix + "1", Type: 0x7f},
			{Index: 3, Export: GlobalExportPrefix + "3", Type: 0x7f},
		},
	}
	if d := cmp.Diff(wantInfo, info); d != "" {
		t.Errorf("info (-want +got):\n%s", d)
	}
	type result struct {
		Run        uint64
		B, C, D    uint64
		A, CCopy   uint64
		GlobalName []string
	}
	run := func(wasm []byte, flag uint64, ack bool, calls *atomic.Int64) result {
		r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
		defer r.Close(ctx)
		tickHost(t, ctx, r, flag, ack, calls)
		m, err := r.Instantiate(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.ExportedFunction("run").Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := result{Run: res[0], B: m.ExportedGlobal("b").Get(), C: m.ExportedGlobal("c").Get(),
			D: m.ExportedGlobal("d").Get()}
		if g := m.ExportedGlobal(GlobalExportPrefix + "1"); g != nil {
			got.A = g.Get()
		}
		if g, ok := m.ExportedGlobal(GlobalExportPrefix + "3").(api.MutableGlobal); ok {
			g.Set(100) // the module's own c
			got.CCopy = m.ExportedGlobal("c").Get()
		}
		return got
	}
	var calls atomic.Int64
	want := result{Run: 89, B: 7, C: 15, D: 20}
	if d := cmp.Diff(want, run(globalsModule, 0, false, &calls)); d != "" {
		t.Fatalf("original module (-want +got):\n%s", d)
	}
	want.A, want.CCopy = 16, 100
	if d := cmp.Diff(want, run(out, 0, false, &calls)); d != "" {
		t.Errorf("rewritten, flag clear (-want +got):\n%s", d)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("tick called %d times with the flag clear", n)
	}
	if d := cmp.Diff(want, run(out, 1, false, &calls)); d != "" {
		t.Errorf("rewritten, flag set (-want +got):\n%s", d)
	}
	// Two function entries and eleven loop heads.
	if n := calls.Swap(0); n != 13 {
		t.Errorf("tick called %d times with the flag set, want 13", n)
	}
	// Acknowledged, the flag is not seen again until it changes.
	if d := cmp.Diff(want, run(out, 1<<63|7, true, &calls)); d != "" {
		t.Errorf("rewritten, flag set and acknowledged (-want +got):\n%s", d)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("tick called %d times with the flag acknowledged, want 1", n)
	}
	if !hasGlobalNames(t, out, map[uint32]string{2: "a", 4: "c"}) {
		t.Error("global names not renumbered")
	}
}

// hasGlobalNames reports whether wasm's name section names globals as want.
func hasGlobalNames(t *testing.T, wasm []byte, want map[uint32]string) bool {
	t.Helper()
	top := reader{b: wasm, pos: 8, end: len(wasm)}
	for !top.done() {
		id, _ := top.byte()
		size, _ := top.u32()
		r := reader{b: wasm, pos: top.pos, end: top.pos + int(size)}
		top.pos = r.end
		if id != secCustom {
			continue
		}
		if n, _ := r.name(); string(n) != "name" {
			continue
		}
		for !r.done() {
			id, _ := r.byte()
			size, _ := r.u32()
			sub := reader{b: wasm, pos: r.pos, end: r.pos + int(size)}
			r.pos = sub.end
			if id != 7 {
				continue
			}
			n, _ := sub.u32()
			got := map[uint32]string{}
			for i := uint32(0); i < n; i++ {
				idx, _ := sub.u32()
				name, _ := sub.name()
				got[idx] = string(name)
			}
			return cmp.Equal(want, got)
		}
	}
	return false
}

// TestTickOddModules rewrites modules at the edges of the global index
// space with Options.Tick: each must compile, and its exports keep their
// globals.
func TestTickOddModules(t *testing.T) {
	ctx := context.Background()
	importG := func(name string, mut byte) []byte {
		return cat(str("env"), str(name), []byte{0x03, 0x7f, mut})
	}
	for _, tc := range []struct {
		name string
		wasm []byte
	}{
		{"empty", header},
		{"no globals, a function", mod(sec(secType, vec(functype(nil, nil))), sec(secFunction, vec(u32(0))),
			sec(secCode, vec(body(nil, 0, 0x0b))))},
		{"imported globals only", mod(sec(secImport, vec(importG("base", 0), importG("m", 1))),
			sec(secExport, vec(cat(str("x"), []byte{0x03, 0x01}))))},
		{"defined globals only, exported", mod(
			sec(secGlobal, vec([]byte{0x7f, 0x01, 0x41, 0x01, 0x0b}, []byte{0x7f, 0x00, 0x41, 0x02, 0x0b})),
			sec(secExport, vec(cat(str("x"), []byte{0x03, 0x00}), cat(str("y"), []byte{0x03, 0x01}))))},
		{"global index needing two bytes", func() []byte {
			var gs [][]byte
			for i := 0; i < 200; i++ {
				gs = append(gs, []byte{0x7f, 0x01, 0x41, 0x00, 0x0b})
			}
			// global 127 (one byte) moves to 128 (two bytes), in code and exports.
			code := []byte{0x41, 0x05, 0x24, 0x7f, 0x23, 0x7f, 0x0b}
			return mod(sec(secType, vec(functype(nil, []byte{0x7f}))),
				sec(secFunction, vec(u32(0))), sec(secGlobal, vec(gs...)),
				sec(secExport, vec(funcExport("f", 0), cat(str("g127"), []byte{0x03}, u32(127)))),
				sec(secCode, vec(body(nil, 0, code...))))
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, info, err := Instrument(tc.wasm, Options{ExportGlobals: true, Tick: true})
			if err != nil {
				t.Fatal(err)
			}
			r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
			defer r.Close(ctx)
			var calls atomic.Int64
			tickHost(t, ctx, r, 1, false, &calls)
			_, err = r.InstantiateWithConfig(ctx, mod(
				sec(secGlobal, vec([]byte{0x7f, 0x01, 0x41, 0x03, 0x0b})),
				sec(secExport, vec(cat(str("m"), []byte{0x03, 0x00}))),
			), wazero.NewModuleConfig().WithName("env2"))
			if err != nil {
				t.Fatal(err)
			}
			orig, err := r.CompileModule(ctx, tc.wasm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.CompileModule(ctx, out); err != nil {
				t.Fatalf("output does not compile: %v", err)
			}
			if want := uint32(len(orig.ImportedFunctions())); info.RefuelFunc != want {
				t.Errorf("RefuelFunc = %d, want %d", info.RefuelFunc, want)
			}
			m, err := r.Instantiate(ctx, out)
			if err != nil {
				return // imports env.m, which env does not export: compiling was the test
			}
			if f := m.ExportedFunction("f"); f != nil {
				res, err := f.Call(ctx)
				if err != nil || res[0] != 5 {
					t.Errorf("f() = %v, %v; want 5", res, err)
				}
				if g := m.ExportedGlobal("g127"); g.Get() != 5 {
					t.Errorf("g127 = %d, want 5", g.Get())
				}
			}
			if g := m.ExportedGlobal("y"); g != nil && g.Get() != 2 {
				t.Errorf("y = %d, want 2", g.Get())
			}
		})
	}
}
