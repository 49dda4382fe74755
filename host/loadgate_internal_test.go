package host

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// countingRuntime is a wazero runtime that counts the modules handed to
// it to compile and, while refuse is set, fails them without decoding a
// byte: a module the host must refuse before wazero sees it would
// otherwise make wazero allocate by its counts.
type countingRuntime struct {
	wazero.Runtime
	n      *atomic.Int32
	refuse *atomic.Bool
}

var errNotDecoded = errors.New("test: wazero was asked to decode a module the host must refuse first")

func (r countingRuntime) CompileModule(ctx context.Context, wasm []byte) (wazero.CompiledModule, error) {
	r.n.Add(1)
	if r.refuse.Load() {
		return nil, errNotDecoded
	}
	return r.Runtime.CompileModule(ctx, wasm)
}

// countCompiles puts h's three runtimes behind countingRuntime.
func countCompiles(h *Host) (n *atomic.Int32, refuse *atomic.Bool) {
	n, refuse = &atomic.Int32{}, &atomic.Bool{}
	h.rt = countingRuntime{h.rt, n, refuse}
	h.rtSafe = countingRuntime{h.rtSafe, n, refuse}
	h.rtCheck = countingRuntime{h.rtCheck, n, refuse}
	return n, refuse
}

// Builders of the hand-made modules below.

func gateU32(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func gateCat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func gateVec(items ...[]byte) []byte {
	return gateCat(gateU32(uint32(len(items))), gateCat(items...))
}

func gateSec(id byte, contents ...[]byte) []byte {
	c := gateCat(contents...)
	return gateCat([]byte{id}, gateU32(uint32(len(c))), c)
}

func gateModule(sections ...[]byte) []byte {
	return gateCat([]byte("\x00asm\x01\x00\x00\x00"), gateCat(sections...))
}

func gateName(s string) []byte { return gateCat(gateU32(uint32(len(s))), []byte(s)) }

// gateBody is a function body: local declarations, then code (with its
// final end).
func gateBody(locals []byte, code ...byte) []byte {
	c := gateCat(locals, code)
	return gateCat(gateU32(uint32(len(c))), c)
}

var (
	voidType    = []byte{0x60, 0x00, 0x00} // () -> ()
	oneFunction = gateSec(3, gateVec(gateU32(0)))
)

// Modules the rewriter finds malformed, or stops scanning before every
// section was checked, are refused (ErrInvalidModule) before wazero is
// asked to decode them — also when the module is one wazero would
// accept. Among them are the rewriter's own bounds: a type index equal to
// the number of types (the index of the () -> i64 type the rewriter
// appends for its refuel import) and a global index equal to the number
// of globals (the index of the budget global it appends), each of which
// would name what the rewriter added.
func TestLoadRefusesWhatTheRewriterRefusesBeforeWazero(t *testing.T) {
	cases := map[string]struct {
		wasm []byte
		want error // what the rewriter itself reports
	}{
		// wazero v1.12.0 compiles it.
		"more locals than the rewriter allows": {gateModule(
			gateSec(1, gateVec(voidType)), oneFunction,
			gateSec(10, gateVec(gateBody(gateCat([]byte{1}, gateU32(rewrite.MaxLocals+1), []byte{0x7f}), 0x0b))),
		), rewrite.ErrMalformed},
		"a GC type, then a global count no input backs": {gateModule(
			gateSec(1, gateVec([]byte{0x5f, 0x00})),
			gateSec(6, gateU32(0xffffffff)),
		), rewrite.ErrUnchecked},
		"a 64-bit memory, then a global count no input backs": {gateModule(
			gateSec(5, gateVec([]byte{0x04, 0x01})),
			gateSec(6, gateU32(0xffffffff)),
		), rewrite.ErrUnchecked},
		"a function of the type index one past the types": {gateModule(
			gateSec(1, gateVec(voidType)), gateSec(3, gateVec(gateU32(1))),
			gateSec(10, gateVec(gateBody([]byte{0}, 0x42, 0x00, 0x0b))),
		), rewrite.ErrMalformed},
		"an imported function of the type index one past the types": {gateModule(
			gateSec(1, gateVec(voidType)),
			gateSec(2, gateVec(gateCat(gateName("extism:host/env"), gateName("length"), []byte{0x00}, gateU32(1)))),
		), rewrite.ErrMalformed},
		"global.set of the budget global's index": {gateModule(
			gateSec(1, gateVec(voidType)), oneFunction,
			gateSec(6, gateVec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})), // global 0: mut i64
			gateSec(10, gateVec(gateBody([]byte{0}, 0x42, 0x00, 0x24, 0x01, 0x0b))),
		), rewrite.ErrMalformed},
		"global.get of the budget global's index": {gateModule(
			gateSec(1, gateVec(voidType)), oneFunction,
			gateSec(6, gateVec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})),
			gateSec(10, gateVec(gateBody([]byte{0}, 0x23, 0x01, 0x1a, 0x0b))),
		), rewrite.ErrMalformed},
	}
	for _, metering := range []bool{true, false} {
		h := internalHost(t, NewConfig().WithMetering(metering).WithTickCheck(true))
		n, refuse := countCompiles(h)
		for name, tc := range cases {
			for _, once := range []bool{false, true} {
				n.Store(0)
				refuse.Store(true)
				_, err := h.Load(context.Background(), tc.wasm, LoadOptions{Name: "gate.wasm", Once: once})
				if !errors.Is(err, ErrInvalidModule) || errors.Is(err, errNotDecoded) {
					t.Errorf("metering %v, once %v: %s: Load err = %v, want ErrInvalidModule from the rewriter", metering, once, name, err)
				}
				if got := n.Load(); got != 0 {
					t.Errorf("metering %v, once %v: %s: wazero was asked to compile %d modules, want none", metering, once, name, got)
				}
				if _, _, err := rewrite.Instrument(tc.wasm, rewrite.Options{Tick: once}); !errors.Is(err, tc.want) {
					t.Errorf("%s: the rewriter reports %v, want %v", name, err, tc.want)
				}
			}
		}
		// The counting reaches wazero: a valid module is compiled.
		refuse.Store(false)
		n.Store(0)
		valid := gateModule(gateSec(1, gateVec(voidType)), oneFunction, gateSec(10, gateVec(gateBody([]byte{0}, 0x0b))))
		if _, err := h.Load(context.Background(), valid, LoadOptions{Name: "valid.wasm"}); err != nil {
			t.Fatalf("metering %v: a valid module: %v", metering, err)
		}
		if n.Load() == 0 {
			t.Fatalf("metering %v: no compile was counted for a valid module", metering)
		}
	}
}
