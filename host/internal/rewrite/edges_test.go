package rewrite

import (
	"errors"
	"testing"
)

// The edges of the rewriter's checks, each found by `make mutate` as a
// change no test noticed.

// Bytes after the entries a section declares are refused.
func TestSectionBytesLeftOver(t *testing.T) {
	void := functype(nil, nil)
	for name, in := range map[string][]byte{
		"types":     mod(sec(secType, vec(void), []byte{0x00})),
		"imports":   mod(sec(secType, vec(void)), sec(secImport, vec(funcImport("env", "f", 0)), []byte{0x00})),
		"functions": mod(sec(secType, vec(void)), sec(secFunction, vec(u32(0)), []byte{0x00}), sec(secCode, vec(body(nil, 0, 0x0b)))),
		"globals":   mod(sec(secGlobal, vec([]byte{0x7f, 0x00, 0x41, 0x00, 0x0b}), []byte{0x00})),
	} {
		if out, _, err := Instrument(in, Options{}); !errors.Is(err, ErrMalformed) || out != nil {
			t.Errorf("%s with a byte left over: %d bytes out, %v; want ErrMalformed", name, len(out), err)
		}
	}
}

// A module that imports the refuel or tick function under the names the
// rewrite uses, or the tick flag, was rewritten already; other imports of
// the same module are not.
func TestAlreadyInstrumentedImports(t *testing.T) {
	types := sec(secType, vec(functype(nil, []byte{0x7e})))
	imp := func(module, name string) []byte { return mod(types, sec(secImport, vec(funcImport(module, name, 0)))) }
	for name, tc := range map[string]struct {
		in   []byte
		opts Options
	}{
		"the default refuel":             {imp(DefaultImportModule, DefaultImportName), Options{}},
		"the default tick":               {imp(DefaultImportModule, DefaultTickImportName), Options{}},
		"the tick, when counting fuel":   {imp(DefaultImportModule, DefaultTickImportName), Options{Tick: false}},
		"the refuel, with the tick":      {imp(DefaultImportModule, DefaultImportName), Options{Tick: true}},
		"a named refuel":                 {imp("m", "n"), Options{ImportModule: "m", ImportName: "n"}},
		"the default name in the module": {imp("m", DefaultImportName), Options{ImportModule: "m", ImportName: "n"}},
		"the tick flag": {mod(sec(secImport, vec(cat(str(TickModule), str(TickGlobal), []byte{0x03, 0x7e, 0x01})))),
			Options{}},
	} {
		if _, _, err := Instrument(tc.in, tc.opts); !errors.Is(err, ErrAlreadyInstrumented) {
			t.Errorf("%s: %v, want ErrAlreadyInstrumented", name, err)
		}
	}
	for name, in := range map[string][]byte{
		"another function of the module": imp(DefaultImportModule, "other"),
		"the refuel name elsewhere":      imp("env", DefaultImportName),
	} {
		if _, _, err := Instrument(in, Options{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An unknown import kind is unsupported, and the scan stopped there:
// unchecked. An unknown opcode, met after every section was checked, is
// unsupported but checked.
func TestUncheckedOnlyBeforeTheScanEnds(t *testing.T) {
	_, _, err := Instrument(mod(sec(secImport, vec(cat(str("env"), str("x"), []byte{0x05, 0x00})))), Options{})
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, ErrUnchecked) {
		t.Errorf("an unknown import kind: %v, want ErrUnsupported and ErrUnchecked", err)
	}
	_, _, err = Instrument(mod(sec(secType, vec([]byte{0x5f, 0x00}))), Options{})
	if !errors.Is(err, ErrUnchecked) {
		t.Errorf("a GC type: %v, want ErrUnchecked", err)
	}
	_, _, err = Instrument(withBody(false, 0xd3, 0x0b), Options{})
	if !errors.Is(err, ErrUnsupported) || errors.Is(err, ErrUnchecked) {
		t.Errorf("an unknown opcode: %v, want ErrUnsupported alone", err)
	}
	// Each error matches its own sentinels only.
	_, _, huge := Instrument(mod(sec(secGlobal, u32(0xffffffff))), Options{})
	_, _, unchecked := Instrument(mod(sec(secType, vec([]byte{0x5f, 0x00}))), Options{})
	for _, tc := range []struct {
		name   string
		err    error
		not    []error
		target error
	}{
		{"an oversized count", huge, []error{ErrUnsupported, ErrUnchecked, ErrAlreadyInstrumented, ErrInvalidOptions}, ErrMalformed},
		{"an unchecked encoding", unchecked, []error{ErrMalformed, ErrAlreadyInstrumented, ErrInvalidOptions, errOversized}, ErrUnchecked},
	} {
		if !errors.Is(tc.err, tc.target) {
			t.Errorf("%s: %v does not match %v", tc.name, tc.err, tc.target)
		}
		for _, not := range tc.not {
			if errors.Is(tc.err, not) {
				t.Errorf("%s: %v matches %v", tc.name, tc.err, not)
			}
		}
	}
	if _, _, err := Instrument(spinModule, Options{ImportModule: "\xff"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("an import module that is not UTF-8: %v, want ErrInvalidOptions", err)
	}
}

// A name section may come once. One whose subsection is malformed in a
// way that could not make wazero allocate is dropped, not refused; one
// whose count claims more than its bytes is refused.
func TestNameSections(t *testing.T) {
	names := func(sub ...byte) []byte { return sec(secCustom, str("name"), sub) }
	base := []byte("\x00asm\x01\x00\x00\x00")
	twice := cat(base, names(0x00, 0x02, 0x01, 'm'), names(0x00, 0x02, 0x01, 'm'))
	if _, _, err := Instrument(twice, Options{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("two name sections: %v, want ErrMalformed", err)
	}
	// Subsection 1 (function names) of 6 bytes: a count in an overlong
	// LEB128.
	bad := cat(base, names(0x01, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00))
	if _, _, err := Instrument(bad, Options{}); err != nil {
		t.Errorf("a malformed function-names subsection: %v, want it dropped", err)
	}
}

// A function may declare MaxLocals locals, not one more.
func TestLocalsAtTheirLimit(t *testing.T) {
	if _, _, err := Instrument(withLocals(MaxLocals), Options{}); err != nil {
		t.Errorf("%d locals: %v", MaxLocals, err)
	}
}

// The refuel import reuses a () -> i64 type declared on its own, never one
// inside a rec group, which is a distinct type.
func TestRefuelTypeOutsideRecGroups(t *testing.T) {
	i64 := functype(nil, []byte{0x7e})
	recI64 := cat([]byte{0x4e}, vec(i64))
	for name, tc := range map[string]struct {
		types []byte
		want  uint32 // the refuel import's type index
	}{
		"standalone":             {vec(functype(nil, nil), i64), 1},
		"two standalone":         {vec(i64, i64), 0},
		"in a rec group":         {vec(recI64), 1},
		"rec group then one":     {vec(recI64, i64), 1},
		"none":                   {vec(functype(nil, nil)), 1},
		"one then the rec group": {vec(i64, recI64), 0},
	} {
		_, _, m, err := instrument(mod(sec(secType, tc.types)), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.refuelType != tc.want {
			t.Errorf("%s: the refuel type is %d, want %d", name, m.refuelType, tc.want)
		}
	}
}

// A section, of any kind and wherever it comes, whose size or whose
// count claims more than the bytes behind it is refused, also when the
// rest of the module would be rewritten without it.
func TestClaimsPastTheInputAreRefused(t *testing.T) {
	void := functype(nil, nil)
	for name, in := range map[string][]byte{
		"a last custom section":  cat(spinModule, []byte{secCustom, 0x0a, 0x01, 'a'}),
		"a last data section":    cat(spinModule, []byte{secData, 0x0a, 0x00}),
		"an export count":        mod(sec(secExport, u32(1000))),
		"an export name":         mod(sec(secExport, vec(cat(u32(100), []byte("run"))))),
		"a function body":        mod(sec(secType, vec(void)), sec(secFunction, vec(u32(0))), sec(secCode, vec(cat(u32(100), []byte{0x00, 0x0b})))),
		"a global count":         mod(sec(secGlobal, u32(1000))),
		"an import count":        mod(sec(secImport, u32(1000))),
		"a type count":           mod(sec(secType, u32(1000))),
		"a function count":       mod(sec(secType, vec(void)), sec(secFunction, u32(1000))),
		"a parameter count":      mod(sec(secType, vec(cat([]byte{0x60}, u32(1000))))),
		"a result count":         mod(sec(secType, vec(cat([]byte{0x60, 0x00}, u32(1000))))),
		"a rec group count":      mod(sec(secType, vec(cat([]byte{0x4e}, u32(1000))))),
		"an import module name":  mod(sec(secImport, vec(cat(u32(100), []byte("env"))))),
		"an import field name":   mod(sec(secImport, vec(cat(str("env"), u32(100), []byte("f"))))),
		"a table import's limit": mod(sec(secImport, vec(cat(str("env"), str("t"), []byte{0x01, 0x70, 0x01, 0x00})))),
		"a memory import's max":  mod(sec(secImport, vec(cat(str("env"), str("m"), []byte{0x02, 0x01, 0x00})))),
		"a global import's type": mod(sec(secImport, vec(cat(str("env"), str("g"), []byte{0x03})))),
		"a global import's mut":  mod(sec(secImport, vec(cat(str("env"), str("g"), []byte{0x03, 0x7f})))),
	} {
		if out, _, err := Instrument(in, Options{}); !errors.Is(err, ErrMalformed) || out != nil {
			t.Errorf("%s: %d bytes out, %v; want ErrMalformed", name, len(out), err)
		}
	}
}
