package rewrite

import (
	"errors"
	"testing"
)

// The rewriter appends a () -> i64 type (when the module has none) at
// the index equal to the number of types, and the budget global at the
// index equal to the number of globals. An input that names either index
// would name what the rewriter added — a function typed as the refuel
// import, or code that refills its own budget — so each index is refused
// at exactly that bound, and the index below it is accepted. The host
// refuses such a module before wazero sees it (host's
// TestLoadRefusesWhatTheRewriterRefusesBeforeWazero).
func TestIndicesAtTheAppendedEntriesAreRefused(t *testing.T) {
	void := functype(nil, nil)
	// types is a type section of n () -> () types.
	types := func(n int) []byte {
		ts := make([][]byte, n)
		for i := range ts {
			ts[i] = void
		}
		return sec(secType, vec(ts...))
	}
	oneFunc := func(typeIdx uint32, code ...byte) []byte {
		return cat(sec(secFunction, vec(u32(typeIdx))), sec(secCode, vec(body(nil, 0, code...))))
	}
	mutGlobal := []byte{0x7e, 0x01, 0x42, 0x00, 0x0b} // mut i64 = 0
	importedGlobal := cat(str("env"), str("g"), []byte{0x03, 0x7e, 0x01})
	// globals is a module with one imported and two defined globals (the
	// budget's index is 3) and one function of code.
	globals := func(code ...byte) []byte {
		return mod(types(1),
			sec(secImport, vec(importedGlobal)),
			sec(secFunction, vec(u32(0))),
			sec(secGlobal, vec(mutGlobal, mutGlobal)),
			sec(secCode, vec(body(nil, 0, code...))))
	}
	for _, tc := range []struct {
		name      string
		at, below []byte
	}{
		{"function type",
			mod(types(2), oneFunc(2, 0x0b)),
			mod(types(2), oneFunc(1, 0x0b))},
		{"function type with no types",
			mod(oneFunc(0, 0x0b)),
			mod(types(1), oneFunc(0, 0x0b))},
		{"imported function type",
			mod(types(2), sec(secImport, vec(funcImport("env", "f", 2)))),
			mod(types(2), sec(secImport, vec(funcImport("env", "f", 1))))},
		{"imported tag type",
			mod(types(1), sec(secImport, vec(cat(str("env"), str("e"), []byte{0x04, 0x00}, u32(1))))),
			mod(types(1), sec(secImport, vec(cat(str("env"), str("e"), []byte{0x04, 0x00}, u32(0)))))},
		{"tag type",
			mod(types(1), sec(secTag, vec(cat([]byte{0x00}, u32(1))))),
			mod(types(1), sec(secTag, vec(cat([]byte{0x00}, u32(0)))))},
		{"global.set",
			globals(0x42, 0x00, 0x24, 0x03, 0x0b),
			globals(0x42, 0x00, 0x24, 0x02, 0x0b)},
		{"global.get",
			globals(0x23, 0x03, 0x1a, 0x0b),
			globals(0x23, 0x02, 0x1a, 0x0b)},
		{"global.set with no globals",
			mod(types(1), oneFunc(0, 0x42, 0x00, 0x24, 0x00, 0x0b)),
			mod(types(1), sec(secFunction, vec(u32(0))), sec(secGlobal, vec(mutGlobal)),
				sec(secCode, vec(body(nil, 0, 0x42, 0x00, 0x24, 0x00, 0x0b))))},
	} {
		for _, tick := range []bool{false, true} {
			opts := Options{Tick: tick}
			if out, _, err := Instrument(tc.at, opts); !errors.Is(err, ErrMalformed) || out != nil {
				t.Errorf("%s at the appended index, tick %v: %d bytes, %v; want ErrMalformed", tc.name, tick, len(out), err)
			}
			if _, _, err := Instrument(tc.below, opts); err != nil {
				t.Errorf("%s one below, tick %v: %v", tc.name, tick, err)
			}
		}
	}
}
