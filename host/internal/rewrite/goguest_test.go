package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// goGuest reads a Go guest of testdata/guests/go.
func goGuest(t testing.TB, name string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "guests", "go", name, name+".wasm"))
	if err != nil {
		t.Skip(err)
	}
	return wasm
}

// extismPlugin runs wasm under the Extism go-sdk (which has the kernel
// and WASI that Go guests import) with wazero's close-on-context-done
// set as given, and, when f is not nil, the refuel import.
func extismPlugin(t testing.TB, wasm []byte, closeOnDone bool, f *fuel) *extism.Plugin {
	t.Helper()
	ctx := context.Background()
	// gohostile imports extism:host/user tool_call.
	funcs := []extism.HostFunction{extism.NewHostFunctionWithStack("tool_call",
		func(context.Context, *extism.CurrentPlugin, []uint64) {},
		[]extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})}
	if f != nil {
		hf := extism.NewHostFunctionWithStack(DefaultImportName,
			func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
				stack[0] = uint64(f.refuel(ctx))
			}, nil, []extism.ValueType{extism.ValueTypeI64})
		hf.SetNamespace(DefaultImportModule)
		funcs = append(funcs, hf)
	}
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{
			EnableWasi:    true,
			RuntimeConfig: wazero.NewRuntimeConfig().WithCloseOnContextDone(closeOnDone),
		}, funcs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

// TestGoGuestRuns runs the instrumented gobench guest (2.5 MB of Go) under
// the Extism go-sdk and checks the outputs testdata/guests/README.md gives.
func TestGoGuestRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a 2.5 MB Go guest")
	}
	out, info, err := Instrument(goGuest(t, "gobench"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gobench: %d checks", info.Checks)
	f := &fuel{slice: 100_000}
	p := extismPlugin(t, out, false, f)
	for _, tc := range []struct{ export, input, want string }{
		{"noop", "", ""},
		{"echo", "hello", "hello"},
		{"intloop", "1000000", "9436980158444776256"},
		{"sha256", "1", "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9"},
		{"sort", "1000", "9780773150223674084"},
	} {
		rc, got, err := p.Call(tc.export, []byte(tc.input))
		if err != nil || rc != 0 || string(got) != tc.want {
			t.Errorf("%s(%q) = %d, %q, %v; want 0, %q", tc.export, tc.input, rc, got, err, tc.want)
		}
	}
	if f.calls.Load() == 0 {
		t.Error("refuel never called")
	}
}

// TestGoGuestSpinStops stops gohostile's spin (for { counter++ }) from
// refuel, with close-on-context-done off.
func TestGoGuestSpinStops(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("compiles a 3.6 MB Go guest (17 s under the race detector)")
	}
	out, _, err := Instrument(goGuest(t, "gohostile"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fuel{slice: 100_000, limit: 100}
	p := extismPlugin(t, out, false, f)
	_, _, err = p.Call("spin", nil)
	if !errors.Is(err, errOutOfFuel) {
		t.Fatalf("spin: err = %v, want %v", err, errOutOfFuel)
	}
}

// BenchmarkGuests compares guests as given (unstoppable), under wazero's
// close-on-context-done, and instrumented with refuel slices of 100,000:
// gobench's exports (Go) and loop_count's count (a bare WAT loop).
func BenchmarkGuests(b *testing.B) {
	loopCount, err := os.ReadFile(filepath.Join(repoRoot(b), "testdata", "guests", "wat", "loop_count.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	type call struct{ export, input string }
	for _, g := range []struct {
		name  string
		wasm  []byte
		calls []call
	}{
		{"gobench", goGuest(b, "gobench"), []call{{"noop", ""}, {"intloop", "1000000"}, {"sha256", "100"}, {"sort", "10000"}}},
		{"loop_count", loopCount, []call{{"count", "10000000"}}},
	} {
		out, _, err := Instrument(g.wasm, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range []struct {
			name        string
			wasm        []byte
			closeOnDone bool
			fuel        *fuel
		}{
			{"plain", g.wasm, false, nil},
			{"close-on-done", g.wasm, true, nil},
			{"instrumented", out, false, &fuel{slice: 100_000}},
		} {
			p := extismPlugin(b, v.wasm, v.closeOnDone, v.fuel)
			for _, c := range g.calls {
				b.Run(g.name+"/"+c.export+"/"+v.name, func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						if rc, _, err := p.Call(c.export, []byte(c.input)); err != nil || rc != 0 {
							b.Fatalf("%s: rc %d, %v", c.export, rc, err)
						}
					}
				})
			}
		}
	}
}
