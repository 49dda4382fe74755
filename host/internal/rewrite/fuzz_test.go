package rewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzInstrument checks that Instrument never panics, fails only with its
// documented errors, and that its output can itself be instrumented again
// (under other import names), which decodes every instruction of the
// output; and, for input it does not call malformed, that if wazero
// compiles the input, it compiles the output too.
func FuzzInstrument(f *testing.F) {
	for _, seed := range [][]byte{header, spinModule, sumModule, fibModule, renumberModule} {
		f.Add(seed, false)
	}
	// The corpus's small modules, and a sample of the wazero set.
	for _, set := range corpus(f) {
		for i, file := range set.files {
			if set.name == "wazero" && i%16 != 0 {
				continue
			}
			in, err := os.ReadFile(file)
			if err != nil || len(in) > 64<<10 {
				continue
			}
			f.Add(in, i%2 == 0)
		}
	}
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, interpreterConfig())
	f.Cleanup(func() { r.Close(ctx) })
	f.Fuzz(func(t *testing.T, in []byte, exportGlobals bool) {
		opts := Options{ExportGlobals: exportGlobals}
		out, info, m, err := instrument(in, opts)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrAlreadyInstrumented) {
				t.Fatalf("Instrument: undocumented error %v", err)
			}
			if out != nil {
				t.Fatal("Instrument returned output with an error")
			}
		} else {
			again, _, err := Instrument(in, opts)
			if err != nil || !bytes.Equal(out, again) {
				t.Fatalf("Instrument is not deterministic: %v", err)
			}
			twice, info2, err := Instrument(out, Options{ImportModule: "other", ExportGlobals: exportGlobals})
			if err != nil {
				t.Fatalf("instrumenting the output again: %v", err)
			}
			if info2.Checks != info.Checks || len(twice) <= len(out) {
				t.Fatalf("instrumenting the output again: %d checks, want %d", info2.Checks, info.Checks)
			}
		}
		if errors.Is(err, ErrMalformed) || (m != nil && m.namesDropped) {
			// wazero might allocate by a count Instrument refused, up to
			// 100 GB: FuzzInstrument once crashed so. It also reads a name
			// section that does not parse (which Instrument drops) past its
			// subsections' ends, where it may find such counts. The corpus
			// tests check that Instrument accepts what wazero compiles.
			return
		}
		orig, cerr := compileRecover(ctx, r, in)
		if cerr != nil {
			if errors.Is(cerr, errWazeroPanic) {
				// A host falling back to close-on-context-done on ErrUnsupported
				// would crash: worth knowing, but wazero's bug.
				t.Fatalf("wazero panics on input that Instrument does not call malformed (Instrument: %v): %v", err, cerr)
			}
			return
		}
		orig.Close(ctx)
		if errors.Is(err, ErrAlreadyInstrumented) {
			return
		}
		var oe *OpcodeError
		if errors.As(err, &oe) && (strings.HasPrefix(oe.Opcode, "0xfc ") ||
			strings.HasPrefix(oe.Opcode, "0xfd ") || strings.HasPrefix(oe.Opcode, "0xfe ")) {
			// wazero v1.12.0 reads SIMD and atomic sub-opcodes as one byte
			// and truncates misc ones to a byte, so it accepts sub-opcodes
			// that are not valid u32 encodings of an instruction (0xfd 0x93
			// 0x1a is 0xd13 to the spec, i16x8.sub_sat_u and drop to wazero).
			return
		}
		if err != nil {
			t.Fatalf("wazero compiles the input, Instrument fails: %v", err)
		}
		got, err := compileRecover(ctx, r, out)
		if err != nil {
			t.Fatalf("wazero compiles the input, not the output: %v", err)
		}
		got.Close(ctx)
		out, _, err = Instrument(in, Options{ExportGlobals: exportGlobals, Tick: true})
		if err != nil {
			t.Fatalf("wazero compiles the input, Instrument with Tick fails: %v", err)
		}
		if got, err = compileRecover(ctx, r, out); err != nil {
			t.Fatalf("wazero compiles the input, not the output with Tick: %v", err)
		}
		got.Close(ctx)
	})
}

var errWazeroPanic = errors.New("wazero panicked")

// compileRecover compiles wasm, turning a panic of wazero into an error.
func compileRecover(ctx context.Context, r wazero.Runtime, wasm []byte) (cm wazero.CompiledModule, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errWazeroPanic, p)
		}
	}()
	return r.CompileModule(ctx, wasm)
}
