package rewrite

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// withBody is a module of one () -> () function with the given code,
// after an import when imported is set.
func withBody(imported bool, code ...byte) []byte {
	var imports []byte
	if imported {
		imports = sec(secImport, vec(funcImport("env", "f", 0)))
	}
	return mod(
		sec(secType, vec(functype(nil, nil))),
		imports,
		sec(secFunction, vec(u32(0))),
		sec(secCode, vec(body(nil, 0, code...))),
	)
}

// withLocals is a module of one function declaring n i32 locals.
func withLocals(n uint32) []byte {
	return mod(
		sec(secType, vec(functype(nil, nil))),
		sec(secFunction, vec(u32(0))),
		sec(secCode, vec(body(cat(u32(n), []byte{0x7f}), 1, 0x0b))),
	)
}

func TestInstrumentErrors(t *testing.T) {
	instrumented, _, err := Instrument(spinModule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		opts Options
		want error
	}{
		{"empty", nil, Options{}, ErrMalformed},
		{"not wasm", []byte("hello, world"), Options{}, ErrMalformed},
		{"component", []byte{0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00}, Options{}, ErrUnsupported},
		{"truncated section", spinModule[:len(spinModule)-1], Options{}, ErrMalformed},
		{"unknown section", mod(sec(14, nil)), Options{}, ErrMalformed},
		{"sections out of order", mod(sec(secFunction, vec()), sec(secType, vec())), Options{}, ErrMalformed},
		{"repeated section", mod(sec(secType, vec()), sec(secType, vec())), Options{}, ErrMalformed},
		{"overlong LEB", withBody(false, 0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a, 0x0b), Options{}, ErrMalformed},
		{"no final end", withBody(false, 0x01), Options{}, ErrMalformed},
		{"body runs past its size", withBody(false, 0x41), Options{}, ErrMalformed},
		{"call out of range", withBody(false, 0x10, 0x01, 0x0b), Options{}, ErrMalformed},
		{"code without functions", mod(sec(secType, vec(functype(nil, nil))), sec(secCode, vec(body(nil, 0, 0x0b)))), Options{}, ErrMalformed},
		{"GC struct type", mod(sec(secType, vec([]byte{0x5f, 0x00}))), Options{}, ErrUnsupported},
		{"64-bit memory import", mod(sec(secImport, vec(cat(str("env"), str("m"), []byte{0x02, 0x04, 0x01})))), Options{}, ErrUnsupported},
		{"unknown opcode", withBody(false, 0xd3, 0x0b), Options{}, ErrUnsupported},
		{"unknown element flags", mod(sec(secElement, vec(u32(8)))), Options{}, ErrMalformed},
		{"already instrumented", instrumented, Options{}, ErrAlreadyInstrumented},
		// Counts wazero v1.12.0 would allocate by: 4G globals, 4G locals,
		// a name map of 4G entries.
		{"huge global count", mod(sec(secGlobal, u32(0xffffffff))), Options{}, ErrMalformed},
		{"huge locals", withLocals(0xffffffff), Options{}, ErrMalformed},
		{"too many locals", withLocals(MaxLocals + 1), Options{}, ErrMalformed},
		{"huge name map", mod(sec(secCustom, str("name"), []byte{0x01, 0x05}, u32(0xffffffff))), Options{}, ErrMalformed},
		// wazero v1.12.0 panics on this one (FuzzInstrument found it): function
		// 0 tail-calls function 1, whose type 48 does not exist.
		{"function type out of range", []byte("\x00asm\x01\x00\x00\x00\x01\t\x02`\x00\x00`\x02\x7f\x7f\x00\x03\x03\x02\x000\n\f\x02\a\x00A0\x01\x12\x01\v\x02\x00\v"), Options{}, ErrMalformed},
		{"huge data segment", mod(sec(secData, vec(cat([]byte{0x01}, u32(0xffffffff))))), Options{}, ErrMalformed},
		{"import name not UTF-8", spinModule, Options{ImportName: "\xff"}, ErrInvalidOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := Instrument(tc.in, tc.opts)
			if !errors.Is(err, tc.want) || out != nil {
				t.Fatalf("Instrument = %d bytes, %v; want %v", len(out), err, tc.want)
			}
		})
	}
}

func TestOpcodeError(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want *OpcodeError
	}{
		{"GC ref.eq", withBody(false, 0xd3, 0x0b), &OpcodeError{Func: 0, Opcode: "0xd3"}},
		{"after an import", withBody(true, 0x01, 0xd3, 0x0b), &OpcodeError{Func: 1, Opcode: "0xd3"}},
		{"relaxed SIMD", withBody(false, 0xfd, 0x80, 0x02, 0x0b), &OpcodeError{Func: 0, Opcode: "0xfd 0x100"}},
		{"reserved SIMD", withBody(false, 0xfd, 0x9a, 0x01, 0x0b), &OpcodeError{Func: 0, Opcode: "0xfd 0x9a"}},
		{"memory64 bulk", withBody(false, 0xfc, 0x12, 0x0b), &OpcodeError{Func: 0, Opcode: "0xfc 0x12"}},
		{"atomic", withBody(false, 0xfe, 0x04, 0x0b), &OpcodeError{Func: 0, Opcode: "0xfe 0x4"}},
		// wazero reads 0xfd 0x8c 0x00 as i16x8.shr_s and a 0x00 (unreachable).
		{"padded SIMD", withBody(false, 0xfd, 0x8c, 0x00, 0x0b), &OpcodeError{Func: 0, Opcode: "0xfd 0xc (padded encoding)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Instrument(tc.in, Options{})
			var got *OpcodeError
			if !errors.As(err, &got) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v, want an *OpcodeError matching ErrUnsupported", err)
			}
			got.Offset = 0
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestOptionsAndSections(t *testing.T) {
	// A () -> i64 type outside a rec group is reused; ExportGlobals skips
	// immutable and imported globals.
	in := mod(
		sec(secType, vec(functype(nil, nil), functype(nil, []byte{0x7e}))),
		sec(secImport, vec(cat(str("env"), str("g"), []byte{0x03, 0x7f, 0x01}))),
		sec(secFunction, vec(u32(0))),
		sec(secGlobal, vec(
			[]byte{0x7f, 0x00, 0x41, 0x01, 0x0b},                   // immutable: global 1
			[]byte{0x7c, 0x01, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b}, // mutable f64: global 2
		)),
		sec(secCode, vec(body(nil, 0, 0x0b))),
		sec(secCustom, str(".debug_info"), []byte{1, 2, 3}),
		sec(secCustom, str("name"), []byte{0x01, 0x04, 0x01, 0x00, 0x01, 0xff}), // not UTF-8: dropped
		sec(secCustom, str("producers"), []byte{0}),
	)
	out, info, err := Instrument(in, Options{ImportModule: "m", ImportName: "n", ExportGlobals: true})
	if err != nil {
		t.Fatal(err)
	}
	want := Info{
		BudgetExport: BudgetExport,
		RefuelFunc:   0,
		Globals:      []GlobalExport{{Index: 2, Export: GlobalExportPrefix + "2", Type: 0x7c}},
		Checks:       1,
	}
	if d := cmp.Diff(want, info); d != "" {
		t.Errorf("info (-want +got):\n%s", d)
	}
	m := &module{in: out, opts: Options{ImportModule: "x", ImportName: "y"}}
	if err := m.scan(); err != nil {
		t.Fatal(err)
	}
	if m.numTypes != 2 || m.refuelType != 1 || m.importedFuncs != 1 || m.importedGlobals != 1 || m.definedGlobals != 3 {
		t.Errorf("output has %d types (refuel type %d), %d imported functions, %d+%d globals; want 2 (1), 1, 1+3",
			m.numTypes, m.refuelType, m.importedFuncs, m.importedGlobals, m.definedGlobals)
	}
	if d := cmp.Diff([]string{"producers"}, customSections(t, out)); d != "" {
		t.Errorf("custom sections (-want +got):\n%s", d)
	}
	if _, _, err := Instrument(out, Options{ImportModule: "m", ImportName: "n"}); !errors.Is(err, ErrAlreadyInstrumented) {
		t.Errorf("instrumenting twice: err = %v, want ErrAlreadyInstrumented", err)
	}

	// A module with no sections gets the type, import, global and export
	// sections it needs.
	out, info, err = Instrument(header, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantOut := mod(
		sec(secType, vec(functype(nil, []byte{0x7e}))),
		sec(secImport, vec(funcImport(DefaultImportModule, DefaultImportName, 0))),
		sec(secGlobal, vec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})),
		sec(secExport, vec(cat(str(BudgetExport), []byte{0x03, 0x00}))),
	)
	if d := cmp.Diff(wantOut, out); d != "" || info.Checks != 0 {
		t.Errorf("empty module: %d checks, output (-want +got):\n%s", info.Checks, d)
	}
}
