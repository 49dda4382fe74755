package rewrite

import (
	"bytes"
	"context"
	"errors"
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

// errTickedOut ends a call whose tick function was called maxTicks times.
var errTickedOut = errors.New("tick called too often")

const maxTicks = 1000

// tickHost instantiates the tick flag and the tick function in r, and the
// env module globalsModule imports; the flag starts at flag. The tick
// function returns 0 (the module calls again at its next check, or at
// once from a loop head's) for its first zeros calls, then the flag (the
// module calls again when the flag changes); with zeros < 0 it always
// returns 0, and ends the call with errTickedOut at its maxTicks-th call.
func tickHost(t *testing.T, ctx context.Context, r wazero.Runtime, flag uint64, zeros int64, calls *atomic.Int64) api.MutableGlobal {
	t.Helper()
	var g api.MutableGlobal
	_, err := r.NewHostModuleBuilder(DefaultImportModule).NewFunctionBuilder().
		WithFunc(func(context.Context) int64 {
			n := calls.Add(1)
			if zeros < 0 && n >= maxTicks {
				panic(errTickedOut)
			}
			if zeros < 0 || n <= zeros {
				return 0
			}
			return int64(g.Get())
		}).Export(DefaultTickImportName).
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g = instantiateTickFlag(t, ctx, r, flag)
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
	run := func(wasm []byte, flag uint64, zeros int64, calls *atomic.Int64) result {
		r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
		defer r.Close(ctx)
		tickHost(t, ctx, r, flag, zeros, calls)
		m, err := r.Instantiate(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.ExportedFunction("run").Call(ctx)
		if zeros < 0 {
			// Never acknowledged: the loop head's check keeps calling,
			// and the loop's body never runs.
			if !errors.Is(err, errTickedOut) {
				t.Fatalf("a tick never acknowledged: %v, want errTickedOut", err)
			}
			return result{C: m.ExportedGlobal("c").Get()}
		}
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
	if d := cmp.Diff(want, run(globalsModule, 0, 0, &calls)); d != "" {
		t.Fatalf("original module (-want +got):\n%s", d)
	}
	want.A, want.CCopy = 16, 100
	if d := cmp.Diff(want, run(out, 0, 0, &calls)); d != "" {
		t.Errorf("rewritten, flag clear (-want +got):\n%s", d)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("tick called %d times with the flag clear", n)
	}
	// Acknowledged, the flag is not seen again until it changes.
	if d := cmp.Diff(want, run(out, 1<<63|7, 0, &calls)); d != "" {
		t.Errorf("rewritten, flag set and acknowledged (-want +got):\n%s", d)
	}
	if n := calls.Swap(0); n != 1 {
		t.Errorf("tick called %d times with the flag acknowledged, want 1", n)
	}
	// Acknowledged at the fourth call: run's entry goes on after a 0, and
	// its loop's head checks again after each call until the flag is
	// seen, then the loop and f's entry check find it seen.
	if d := cmp.Diff(want, run(out, 1, 3, &calls)); d != "" {
		t.Errorf("rewritten, flag set, acknowledged late (-want +got):\n%s", d)
	}
	if n := calls.Swap(0); n != 4 {
		t.Errorf("tick called %d times with the flag acknowledged at the fourth, want 4", n)
	}
	// Never acknowledged: the loop's body never runs (c stays 5).
	if got := run(out, 1, -1, &calls); got.C != 5 {
		t.Errorf("the loop's body ran with the flag never acknowledged: c = %d, want 5", got.C)
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
			tickHost(t, ctx, r, 1, -1, &calls)
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

// TestTickLoopHeads: the check at the head of a loop without parameters
// branches back to the loop after the call, so the loop's body runs only
// once the flag is seen; a loop with parameters (a type index for block
// type) keeps the check that goes on after the call, as function entries
// do. "empty" runs an empty loop, then a loop taking an i32 that counts
// 2 down to 0, and returns 7; "params" runs the second loop alone.
func TestTickLoopHeads(t *testing.T) {
	ctx := context.Background()
	paramLoop := []byte{
		0x41, 0x02, // i32.const 2
		0x03, 0x01, // loop (type 1): [i32] -> [i32]
		0x41, 0x01, 0x6b, 0x22, 0x00, 0x20, 0x00, 0x0d, 0x00, // n-1, tee, get, br_if 0
		0x0b,
		0x41, 0x07, 0x6a, // + 7
	}
	empty := cat([]byte{0x03, 0x40, 0x0b}, paramLoop, []byte{0x0b})
	params := cat(paramLoop, []byte{0x0b})
	locals := cat(u32(1), []byte{0x7f})
	wasm := mod(
		sec(secType, vec(functype(nil, []byte{0x7f}), functype([]byte{0x7f}, []byte{0x7f}))),
		sec(secFunction, vec(u32(0), u32(0))),
		sec(secExport, vec(funcExport("empty", 0), funcExport("params", 1))),
		sec(secCode, vec(body(locals, 1, empty...), body(locals, 1, params...))),
	)
	out, _, err := Instrument(wasm, Options{Tick: true})
	if err != nil {
		t.Fatal(err)
	}
	// The check after each loop instruction: global.get 0 (the flag),
	// global.get 1 (seen), i64.ne, if, call 0 (tick), global.set 1, then
	// br 1 after the empty loop only.
	check := []byte{0x23, 0x00, 0x23, 0x01, 0x52, 0x04, 0x40, 0x10, 0x00, 0x24, 0x01}
	if !bytes.Contains(out, cat([]byte{0x03, 0x40}, check, []byte{0x0c, 0x01, 0x0b, 0x0b})) {
		t.Error("the empty loop's check does not branch back to the loop")
	}
	if !bytes.Contains(out, cat([]byte{0x03, 0x01}, check, []byte{0x0b, 0x41, 0x01})) {
		t.Error("the check of the loop with parameters is not the one that goes on")
	}
	for _, tc := range []struct {
		export string
		zeros  int64
		calls  int64
		err    error
	}{
		// The entry goes on after a 0; the empty loop's head calls until
		// the flag is seen (calls 2-4); the other loop finds it seen.
		{"empty", 3, 4, nil},
		// Never acknowledged: the empty loop's body never runs.
		{"empty", -1, maxTicks, errTickedOut},
		// The loop with parameters goes on after a 0, at both iterations.
		{"params", -1, 3, nil},
	} {
		r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
		var calls atomic.Int64
		tickHost(t, ctx, r, 1, tc.zeros, &calls)
		m, err := r.Instantiate(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.ExportedFunction(tc.export).Call(ctx)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%s, %d zeros: %v, want %v", tc.export, tc.zeros, err, tc.err)
		case tc.err == nil && (err != nil || res[0] != 7):
			t.Errorf("%s, %d zeros: %v, %v; want 7", tc.export, tc.zeros, res, err)
		}
		if n := calls.Load(); n != tc.calls {
			t.Errorf("%s, %d zeros: tick called %d times, want %d", tc.export, tc.zeros, n, tc.calls)
		}
		r.Close(ctx)
	}
}

// TestFingerprint: the fingerprint differs by mode and options and is
// stable, and the probe module still has a loop head whose check branches
// back, so that a change of that shape changes the fingerprint.
func TestFingerprint(t *testing.T) {
	seen := map[string]Options{}
	for _, opts := range []Options{{}, {Tick: true}, {ExportGlobals: true}, {ExportGlobals: true, Tick: true}} {
		fp := Fingerprint(opts)
		if len(fp) != 64 || fp != Fingerprint(opts) {
			t.Errorf("%+v: fingerprint %q, not a stable SHA-256", opts, fp)
		}
		if prev, dup := seen[fp]; dup {
			t.Errorf("%+v and %+v share a fingerprint", prev, opts)
		}
		seen[fp] = opts
	}
	out, _, err := Instrument(probeModule, Options{Tick: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte{0x0c, 0x01, 0x0b}) {
		t.Error("the probe module's loop without parameters got no check that branches back: the probe no longer covers it")
	}
}
