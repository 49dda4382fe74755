package rewrite

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// renumberModule puts a function index everywhere one can be: exports,
// the start section, a global initialiser, element segments of all eight
// encodings, call, return_call and ref.func in code, and the name section.
// Functions (before instrumenting): 0 env.k (import), 1-8 f_a..f_h
// returning 1..8, 9 run, 10 tail, 11 start, 12 callk.
var renumberModule = func() []byte {
	const typeI32, typeVoid = 0, 1
	i32 := func(v byte) []byte { return []byte{0x41, v, 0x0b} } // i32.const v; end
	refFunc := func(f byte) []byte { return []byte{0xd2, f, 0x0b} }
	funcs := vec(u32(typeI32), u32(typeI32), u32(typeI32), u32(typeI32), u32(typeI32), u32(typeI32),
		u32(typeI32), u32(typeI32), u32(typeI32), u32(typeI32), u32(typeVoid), u32(typeI32))
	var bodies [][]byte
	for k := byte(1); k <= 8; k++ {
		bodies = append(bodies, body(nil, 0, 0x41, k, 0x0b))
	}
	run := []byte{
		0x41, 0x00, 0x23, 0x00, 0x26, 0x00, // table[0] = global 0 (ref.func f_a)
		0x41, 0x04, 0x41, 0x00, 0x41, 0x01, 0xfc, 0x0c, 0x01, 0x00, // table.init elem 1 (f_e) at 4
		0x41, 0x05, 0x41, 0x00, 0x41, 0x01, 0xfc, 0x0c, 0x05, 0x00, // table.init elem 5 (f_f) at 5
		0x41, 0x06, 0xd2, 0x07, 0x26, 0x00, // table[6] = ref.func f_g
		0x41, 0x07, 0xd2, 0x08, 0x26, 0x00, // table[7] = ref.func f_h
		0x41, 0x00, 0x11, typeI32, 0x00, // table[0]()
	}
	for i := byte(1); i < 8; i++ { // acc = acc*10 + table[i]()
		run = append(run, 0x41, 10, 0x6c, 0x41, i, 0x11, typeI32, 0x00, 0x6a)
	}
	run = append(run, 0x0b)
	bodies = append(bodies,
		body(nil, 0, run...),
		body(nil, 0, 0x12, 0x02, 0x0b),           // tail: return_call f_b
		body(nil, 0, 0x41, 42, 0x24, 0x01, 0x0b), // start: started = 42
		body(nil, 0, 0x10, 0x00, 0x0b),           // callk: k()
	)
	names := []string{"k", "f_a", "f_b", "f_c", "f_d", "f_e", "f_f", "f_g", "f_h", "run", "tail", "start", "callk"}
	var nameMap [][]byte
	for i, n := range names {
		nameMap = append(nameMap, cat(u32(uint32(i)), str(n)))
	}
	return mod(
		sec(secType, vec(functype(nil, []byte{0x7f}), functype(nil, nil))),
		sec(secImport, vec(funcImport("env", "k", typeI32))),
		sec(secFunction, funcs),
		sec(secTable, vec([]byte{0x70, 0x00, 0x08})),
		sec(secGlobal, vec(cat([]byte{0x70, 0x00}, refFunc(1)), cat([]byte{0x7f, 0x01}, i32(0)))),
		sec(secExport, vec(funcExport("run", 9), funcExport("tail", 10), funcExport("callk", 12),
			cat(str("started"), []byte{0x03, 0x01}), funcExport(BudgetExport, 9))),
		sec(secStart, u32(11)),
		sec(secElement, vec(
			cat([]byte{0x00}, i32(0), vec(u32(1))),                         // active: f_a at 0
			cat([]byte{0x01, 0x00}, vec(u32(5))),                           // passive: f_e
			cat([]byte{0x02, 0x00}, i32(1), []byte{0x00}, vec(u32(2))),     // active, table 0: f_b at 1
			cat([]byte{0x03, 0x00}, vec(u32(7))),                           // declarative: f_g
			cat([]byte{0x04}, i32(2), vec(refFunc(3))),                     // active, exprs: f_c at 2
			cat([]byte{0x05, 0x70}, vec(refFunc(6))),                       // passive, exprs: f_f
			cat([]byte{0x06, 0x00}, i32(3), []byte{0x70}, vec(refFunc(4))), // active, table 0, exprs: f_d at 3
			cat([]byte{0x07, 0x70}, vec(refFunc(8))),                       // declarative, exprs: f_h
		)),
		sec(secCode, vec(bodies...)),
		sec(secCustom, str("name"),
			[]byte{0x01}, u32(uint32(len(vec(nameMap...)))), vec(nameMap...), // function names
			[]byte{0x02}, u32(uint32(len(vec(cat(u32(12), vec(cat(u32(0), str("x")))))))), // local names
			vec(cat(u32(12), vec(cat(u32(0), str("x")))))),
		sec(secCustom, str("producers"), []byte("kept as is")),
	)
}()

func TestRenumber(t *testing.T) {
	ctx := context.Background()
	out, info, err := Instrument(renumberModule, Options{ExportGlobals: true})
	if err != nil {
		t.Fatal(err)
	}
	wantInfo := Info{
		BudgetExport:        BudgetExport + "_1",
		RefuelFunc:          1,
		Globals:             []GlobalExport{{Index: 1, Export: GlobalExportPrefix + "1", Type: 0x7f}},
		Checks:              12,
		WritesOutsideMemory: true, // table.set and table.init
	}
	if d := cmp.Diff(wantInfo, info); d != "" {
		t.Errorf("info (-want +got):\n%s", d)
	}
	type result struct {
		Run, Tail, CallK []uint64
		Started          uint64
		Names            map[string]string
	}
	runModule := func(wasm []byte, f *fuel) result {
		r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
		defer r.Close(ctx)
		if f != nil {
			instantiateFuel(t, ctx, r, f)
		}
		_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
			WithFunc(func() uint32 { return 100 }).Export("k").Instantiate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Instantiate(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		call := func(name string) []uint64 {
			res, err := m.ExportedFunction(name).Call(ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
		res := result{Run: call("run"), Tail: call("tail"), CallK: call("callk"),
			Started: m.ExportedGlobal("started").Get(), Names: map[string]string{}}
		for name, def := range m.ExportedFunctionDefinitions() {
			res.Names[name] = def.Name()
		}
		delete(res.Names, BudgetExport) // exported twice: the export's definition name is either
		return res
	}
	want := result{Run: []uint64{12345678}, Tail: []uint64{2}, CallK: []uint64{100}, Started: 42,
		Names: map[string]string{"run": "run", "tail": "tail", "callk": "callk"}}
	if d := cmp.Diff(want, runModule(renumberModule, nil)); d != "" {
		t.Fatalf("original module (-want +got):\n%s", d)
	}
	f := &fuel{slice: 1000}
	if d := cmp.Diff(want, runModule(out, f)); d != "" {
		t.Errorf("instrumented module (-want +got):\n%s", d)
	}
	if f.calls.Load() == 0 {
		t.Error("refuel never called")
	}

	// The exported mutable global is the module's own.
	r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
	defer r.Close(ctx)
	instantiateFuel(t, ctx, r, &fuel{slice: 1000})
	_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func() uint32 { return 100 }).Export("k").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := m.ExportedGlobal(GlobalExportPrefix + "1").(api.MutableGlobal)
	if !ok || g.Get() != 42 {
		t.Fatalf("exported global = %v, want a mutable global holding 42", m.ExportedGlobal(GlobalExportPrefix+"1"))
	}
	g.Set(7)
	if got := m.ExportedGlobal("started").Get(); got != 7 {
		t.Errorf("started = %d after setting the exported copy to 7", got)
	}
	if b, ok := m.ExportedGlobal(info.BudgetExport).(api.MutableGlobal); !ok || b.Type() != api.ValueTypeI64 {
		t.Errorf("budget export %q is not a mutable i64 global", info.BudgetExport)
	}

	if d := cmp.Diff([]string{"name", "producers"}, customSections(t, out)); d != "" {
		t.Errorf("custom sections (-want +got):\n%s", d)
	}
}

// customSections lists the names of the custom sections of wasm.
func customSections(t *testing.T, wasm []byte) []string {
	t.Helper()
	m := &module{in: wasm}
	if err := m.scan(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range m.sections {
		if s.id == secCustom {
			r := m.reader(s)
			n, err := r.name()
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, string(n))
		}
	}
	return names
}
