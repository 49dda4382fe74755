package host_test

// Benchmarks of skillhost against the Extism go-sdk and against wazero used
// directly. Every benchmark compares its variants as sub-benchmarks of one
// run, named guest=…/host=… so that benchstat can pivot on them:
//
//	go test -run '^$' -bench . -benchmem -count=10 ./host > bench.txt
//	benchstat -col /host bench.txt
//
// Variants:
//
//   - host=skillhost: this package, with the shared test compilation cache.
//   - host=extism: github.com/extism/go-sdk with WASI and a manifest timeout,
//     which turns on close-on-context-done as skillhost does.
//   - host=wazero-enforced: the module alone in a wazero runtime with
//     close-on-context-done on, called with a deadline context, beside a
//     minimal Extism kernel (benchKernel): the floor for a host that can
//     stop a spinning guest.
//   - host=wazero-none: the same with close-on-context-done off: the speed
//     of a host that cannot stop a spinning guest at all.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/skillhost/skillhost/host"
)

// Fixtures, relative to the repository root.
const (
	benchGoGuest = "testdata/guests/go/gobench/gobench.wasm"
	benchWATEcho = "testdata/guests/wat/echo.wasm"
	benchWATLoop = "testdata/guests/wat/loop_count.wasm"
	// benchText is the bundled text tools' module: slugify is a real tool.
	benchText      = "packs/bundled/modules/text/text.wasm"
	benchRustGuest = "guests/rust/examples/textstats/textstats.wasm"
)

// benchTimeout is the per-call deadline of every variant: skillhost's
// default, the go-sdk manifest timeout and the raw wazero call context.
const benchTimeout = host.DefaultTimeout

// benchCache is the compilation cache of the go-sdk and raw wazero
// runtimes: the shared test cache directory, which skillhost uses too.
var benchCache = sync.OnceValue(func() wazero.CompilationCache {
	c, err := wazero.NewCompilationCacheWithDir(testCacheDir)
	if err != nil {
		panic(err)
	}
	return c
})

// benchCase is one export of one fixture with its input and, when not
// empty, the output every variant must produce.
type benchCase struct {
	name   string
	file   string
	export string
	input  string
	want   string
}

func (c benchCase) wasm(b *testing.B) []byte {
	b.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", c.file))
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}

// BenchmarkWarmCall measures calling an export that returns at once in an
// instance kept from an earlier call: the fixed cost per call of each host.
func BenchmarkWarmCall(b *testing.B) {
	for _, c := range []benchCase{
		{name: "go", file: benchGoGuest, export: "noop"},
		{name: "wat", file: benchWATEcho, export: "noop"},
	} {
		b.Run("guest="+c.name+"/host=skillhost", func(b *testing.B) { benchSkillhostPool(b, c) })
		b.Run("guest="+c.name+"/host=extism", func(b *testing.B) {
			wasm, input := c.wasm(b), []byte(c.input)
			p, err := extism.NewPlugin(context.Background(), benchManifest(wasm), benchExtismConfig(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background())
			benchCheck(b, c, "extism")(p.Call(c.export, input)) // runs _initialize
			b.ReportAllocs()
			for b.Loop() {
				if rc, _, err := p.Call(c.export, input); err != nil || rc != 0 {
					b.Fatalf("rc %d, err %v", rc, err)
				}
			}
		})
		b.Run("guest="+c.name+"/host=wazero-enforced", func(b *testing.B) { benchRaw(b, c, true) })
	}
}

// BenchmarkFreshCall measures a call in a new instance, so that no state
// of one call reaches the next: instantiation, the guest's initialisation
// (_initialize: milliseconds for standard Go) and the call.
func BenchmarkFreshCall(b *testing.B) {
	for _, c := range []benchCase{
		{name: "go", file: benchGoGuest, export: "noop"},
		{name: "rust", file: benchRustGuest, export: "noop"},
	} {
		b.Run("guest="+c.name+"/host=skillhost", func(b *testing.B) {
			h := newHost(b, testConfig())
			m, err := h.Load(context.Background(), c.wasm(b), host.LoadOptions{Name: c.file})
			if err != nil {
				b.Fatal(err)
			}
			input := []byte(c.input)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Call(context.Background(), c.export, input, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("guest="+c.name+"/host=extism", func(b *testing.B) {
			ctx := context.Background()
			cfg := benchExtismConfig()
			cp, err := extism.NewCompiledPlugin(ctx, benchManifest(c.wasm(b)), cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cp.Close(ctx)
			input := []byte(c.input)
			b.ReportAllocs()
			for b.Loop() {
				p, err := cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: cfg.ModuleConfig})
				if err != nil {
					b.Fatal(err)
				}
				if rc, _, err := p.Call(c.export, input); err != nil || rc != 0 {
					b.Fatalf("rc %d, err %v", rc, err)
				}
				p.Close(ctx)
			}
		})
	}
}

// BenchmarkCompute measures compute-bound guests in warm instances: what
// being able to stop a guest at its deadline costs (close-on-context-done
// makes the compiler call out to Go at every loop head), and what
// skillhost adds on top of it. Each call takes 1–50 ms, but a call that
// does nothing and a real tool (the bundled slugify), which show the fixed
// cost of a call.
func BenchmarkCompute(b *testing.B) {
	for _, c := range []benchCase{
		{name: "go-intloop", file: benchGoGuest, export: "intloop", input: "1000000", want: "9436980158444776256"},
		{name: "go-sha256", file: benchGoGuest, export: "sha256", input: "500", want: wantSHA256(500)},
		{name: "go-sort", file: benchGoGuest, export: "sort", input: "40000", want: wantSort(40000)},
		{name: "wat-loop_count", file: benchWATLoop, export: "count", input: "1000000", want: "9436980158444776256"},
		{name: "go-noop", file: benchGoGuest, export: "noop"},
		{name: "text-slugify", file: benchText, export: "slugify", input: slugifyInput, want: slugifyWant},
	} {
		b.Run("guest="+c.name+"/host=skillhost", func(b *testing.B) { benchSkillhostPool(b, c) })
		b.Run("guest="+c.name+"/host=wazero-enforced", func(b *testing.B) { benchRaw(b, c, true) })
		b.Run("guest="+c.name+"/host=wazero-none", func(b *testing.B) { benchRaw(b, c, false) })
	}
}

// BenchmarkComputeRatio runs each compute kernel, and a call that does
// nothing, under skillhost and under raw wazero without any interruption
// check, alternating the variants in every iteration so that a noisy
// machine weighs on all alike, and reports the medians' ratios: x-none is
// a warm skillhost instance without a fuel limit, with the tick check
// (Config.WithTickCheck, the default on Linux), against raw wazero,
// count-none the same counting fuel (CountFuel: the budget check),
// fuel-none with a fuel limit set, fresh-none a call of Module.Call (fresh
// state restored from the snapshot, with the tick check) against the raw
// warm call. The tight
// loop is the 64-bit LCG of gobench intloop (Go) and wat/loop_count (a
// bare WAT loop: the worst case, one check per four-cycle iteration).
func BenchmarkComputeRatio(b *testing.B) {
	for _, c := range []benchCase{
		{name: "go-intloop", file: benchGoGuest, export: "intloop", input: "2000000", want: wantLCG(2000000)},
		{name: "go-sha256", file: benchGoGuest, export: "sha256", input: "500", want: wantSHA256(500)},
		{name: "go-sort", file: benchGoGuest, export: "sort", input: "40000", want: wantSort(40000)},
		{name: "go-noop", file: benchGoGuest, export: "noop"},
		{name: "wat-loop_count", file: benchWATLoop, export: "count", input: "2000000", want: wantLCG(2000000)},
		{name: "text-slugify", file: benchText, export: "slugify", input: slugifyInput, want: slugifyWant},
	} {
		b.Run("guest="+c.name, func(b *testing.B) {
			ctx := context.Background()
			h := newHost(b, testConfig())
			m, err := h.Load(ctx, c.wasm(b), host.LoadOptions{Name: c.file})
			if err != nil {
				b.Fatal(err)
			}
			m.PrepareTickCheck()
			pool := func(limits host.Limits, countFuel bool) *host.Pool {
				p, err := m.NewPool(host.CallOptions{Grant: host.Grant{Limits: limits}, CountFuel: countFuel}, 1)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(p.Close)
				return p
			}
			warm, counted, fueled := pool(host.Limits{}, false), pool(host.Limits{}, true), pool(host.Limits{MaxFuel: 1 << 60}, false)
			raw := newRawGuest(b, c.wasm(b), c.export, false)
			input := []byte(c.input)
			variants := []func() ([]byte, error){
				func() ([]byte, error) { _, out, err := raw.call(input); return out, err },
				func() ([]byte, error) { res, err := warm.Call(ctx, c.export, input); return res.Output, err },
				func() ([]byte, error) { res, err := fueled.Call(ctx, c.export, input); return res.Output, err },
				func() ([]byte, error) { res, err := m.Call(ctx, c.export, input, nil); return res.Output, err },
				func() ([]byte, error) { res, err := counted.Call(ctx, c.export, input); return res.Output, err },
			}
			times := make([][]time.Duration, len(variants))
			for _, v := range variants { // warms every variant and checks its output
				out, err := v()
				benchCheck(b, c, "variant")(0, out, err)
			}
			for b.Loop() {
				for i, v := range variants {
					t0 := time.Now()
					if _, err := v(); err != nil {
						b.Fatal(err)
					}
					times[i] = append(times[i], time.Since(t0))
				}
			}
			none := medianDuration(times[0])
			b.ReportMetric(float64(none.Nanoseconds())/1e3, "none-µs")
			b.ReportMetric(float64(medianDuration(times[1]))/float64(none), "x-none")
			b.ReportMetric(float64(medianDuration(times[2]))/float64(none), "fuel-none")
			b.ReportMetric(float64(medianDuration(times[3]))/float64(none), "fresh-none")
			b.ReportMetric(float64(medianDuration(times[3]).Nanoseconds())/1e3, "fresh-µs")
			b.ReportMetric(float64(medianDuration(times[4]))/float64(none), "count-none")
		})
	}
}

func medianDuration(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// slugifyInput is a call of the bundled slugify tool, which outputs
// slugifyWant.
const (
	slugifyInput = `{"text":"Hello, Wörld! Fresh state in microseconds"}`
	slugifyWant  = `{"slug":"hello-world-fresh-state-in-microseconds"}`
)

// wantLCG is gobench intloop's and loop_count's output for n.
// benchParallelFresh calls c's export of m with input from GOMAXPROCS
// goroutines, each call in fresh state.
func benchParallelFresh(b *testing.B, m *host.Module, c benchCase, input []byte) {
	ctx := context.Background()
	res, err := m.Call(ctx, c.export, input, nil)
	benchCheck(b, c, "skillhost")(0, res.Output, err)
	// The check made the instance the calls are restored into; that is
	// not theirs to pay.
	b.ResetTimer()
	b.ReportAllocs()
	cpu := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Call(ctx, c.export, input, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCalls(b, cpu)
}

func wantLCG(n int) string {
	var x uint64
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return strconv.FormatUint(x, 10)
}

// BenchmarkParallelCall calls one tool from GOMAXPROCS goroutines at once,
// each call in fresh state (Module.Call restoring a snapshot) or in a
// pool's warm instances: run with -cpu 1,2 and compare calls/s, which
// should grow with the cores. cpu-ns/op is the CPU time the process used
// per call: it stays the same from one caller to two when nothing makes
// concurrent calls cost more, even while other jobs hold the cores.
// restore=protect restores as restores did before they left changed pages
// writable (see dirtyTracker.restore); budget runs under a memory budget,
// as an Engine does; raw is raw wazero with an instance per caller, the
// machine's own scaling at the time.
func BenchmarkParallelCall(b *testing.B) {
	for _, c := range []benchCase{
		{name: "go-echo", file: benchGoGuest, export: "echo", input: "ping", want: "ping"},
		{name: "go-sort", file: benchGoGuest, export: "sort", input: "2000", want: wantSort(2000)},
	} {
		h := newHost(b, testConfig())
		m, err := h.Load(context.Background(), c.wasm(b), host.LoadOptions{Name: c.file})
		if err != nil {
			b.Fatal(err)
		}
		input := []byte(c.input)
		for _, protect := range []bool{false, true} {
			name := "guest=" + c.name + "/state=fresh/restore=copy"
			if protect {
				// Restores as they were: every page copied back is
				// protected again.
				name = "guest=" + c.name + "/state=fresh/restore=protect"
			}
			b.Run(name, func(b *testing.B) {
				defer host.SetProtectAlways(host.SetProtectAlways(protect))
				benchParallelFresh(b, m, c, input)
			})
		}
		b.Run("guest="+c.name+"/state=fresh/budget", func(b *testing.B) {
			// Under a memory budget, as an Engine runs.
			hb := newHost(b, testConfig().WithMemoryBudget(1<<30))
			mb, err := hb.Load(context.Background(), c.wasm(b), host.LoadOptions{Name: c.file})
			if err != nil {
				b.Fatal(err)
			}
			benchParallelFresh(b, mb, c, input)
		})
		b.Run("guest="+c.name+"/state=raw", func(b *testing.B) {
			// Raw wazero, one instance per caller: what the machine gives
			// two callers at the moment.
			guests := make(chan *rawGuest, runtime.GOMAXPROCS(0))
			for range cap(guests) {
				g := newRawGuest(b, c.wasm(b), c.export, false)
				_, out, err := g.call(input)
				benchCheck(b, c, "raw")(0, out, err)
				guests <- g
			}
			b.ResetTimer()
			b.ReportAllocs()
			cpu := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				g := <-guests
				for pb.Next() {
					if _, _, err := g.call(input); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportCalls(b, cpu)
		})
		b.Run("guest="+c.name+"/state=pool", func(b *testing.B) {
			ctx := context.Background()
			p, err := m.NewPool(host.CallOptions{}, runtime.GOMAXPROCS(0))
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.ReportAllocs()
			cpu := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := p.Call(ctx, c.export, input); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportCalls(b, cpu)
		})
	}
}

// reportCalls reports calls/s and, where the process's CPU time can be
// read, the CPU time per call since cpu was read.
func reportCalls(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	if used := processCPU() - cpu; cpu > 0 && used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// wantSHA256 is gobench sha256's output for n: the hex SHA-256 of n copies
// of the 1 KiB block whose byte i is byte(i).
func wantSHA256(n int) string {
	var block [1024]byte
	for i := range block {
		block[i] = byte(i)
	}
	h := sha256.New()
	for range n {
		h.Write(block[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// wantSort is gobench sort's output for n: n values x>>1 of the LCG from
// 42, sorted, summed as sum((i+1)*v[i]) mod 2^64.
func wantSort(n int) string {
	v := make([]uint64, n)
	x := uint64(42)
	for i := range v {
		x = x*6364136223846793005 + 1442695040888963407
		v[i] = x >> 1
	}
	slices.Sort(v)
	var sum uint64
	for i, e := range v {
		sum += uint64(i+1) * e
	}
	return strconv.FormatUint(sum, 10)
}

// BenchmarkColdStart measures a process's first call of a standard Go
// guest: a new Host, Load and one call, with an empty compilation cache
// directory (the module is compiled, ≈ 1–2 s) and with a warm one.
func BenchmarkColdStart(b *testing.B) {
	c := benchCase{file: benchGoGuest, export: "noop"}
	run := func(b *testing.B, cfg host.Config, wasm []byte) {
		ctx := context.Background()
		h, err := host.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close(ctx)
		m, err := h.Load(ctx, wasm, host.LoadOptions{Name: c.file})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Call(ctx, c.export, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("guest=go/cache=empty", func(b *testing.B) {
		wasm, parent := c.wasm(b), b.TempDir()
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			dir, err := os.MkdirTemp(parent, "cache")
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			run(b, host.NewConfig().WithCacheDir(dir), wasm)
			b.StopTimer()
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	b.Run("guest=go/cache=warm", func(b *testing.B) {
		wasm := c.wasm(b)
		run(b, testConfig(), wasm) // fills the cache if this is its first use
		b.ReportAllocs()
		for b.Loop() {
			run(b, testConfig(), wasm)
		}
	})
}

// benchSkillhostPool calls c in a warm skillhost instance.
func benchSkillhostPool(b *testing.B, c benchCase) {
	h := newHost(b, testConfig())
	m, err := h.Load(context.Background(), c.wasm(b), host.LoadOptions{Name: c.file})
	if err != nil {
		b.Fatal(err)
	}
	p, err := m.NewPool(host.CallOptions{}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx, input := context.Background(), []byte(c.input)
	res, err := p.Call(ctx, c.export, input) // instantiates, runs _initialize
	benchCheck(b, c, "skillhost")(0, res.Output, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Call(ctx, c.export, input); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRaw calls c in a warm instance in a bare wazero runtime, each call
// with its own deadline context as a host enforcing timeouts would.
func benchRaw(b *testing.B, c benchCase, interrupt bool) {
	g := newRawGuest(b, c.wasm(b), c.export, interrupt)
	input := []byte(c.input)
	benchCheck(b, c, "wazero")(g.call(input))
	b.ReportAllocs()
	for b.Loop() {
		if rc, _, err := g.call(input); err != nil || rc != 0 {
			b.Fatalf("rc %d, err %v", rc, err)
		}
	}
}

// benchCheck returns a function that fails b unless a call of c succeeded
// with the expected output. It takes the go-sdk's Call results.
func benchCheck(b *testing.B, c benchCase, variant string) func(uint32, []byte, error) {
	return func(rc uint32, out []byte, err error) {
		b.Helper()
		if err != nil || rc != 0 {
			b.Fatalf("%s %s(%q): rc %d, err %v", variant, c.export, c.input, rc, err)
		}
		if c.want != "" && string(out) != c.want {
			b.Fatalf("%s %s(%q) = %q, want %q", variant, c.export, c.input, out, c.want)
		}
	}
}

func benchManifest(wasm []byte) extism.Manifest {
	return extism.Manifest{
		Wasm:    []extism.Wasm{extism.WasmData{Data: wasm}},
		Timeout: uint64(benchTimeout / time.Millisecond),
	}
}

func benchExtismConfig() extism.PluginConfig {
	return extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(benchCache()),
		ModuleConfig:  benchModuleConfig(),
	}
}

// benchModuleConfig is the guest configuration of the go-sdk and raw
// variants: real clocks and randomness as skillhost gives, no start function.
func benchModuleConfig() wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep().
		WithRandSource(rand.Reader)
}

// rawGuest is one instance of a module in a runtime of its own, with
// WASI and benchKernel as its only host modules.
type rawGuest struct {
	rt wazero.Runtime
	fn api.Function
	k  *benchKernel
}

func newRawGuest(b *testing.B, wasm []byte, export string, interrupt bool) *rawGuest {
	b.Helper()
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig().WithCloseOnContextDone(interrupt).WithCompilationCache(benchCache())
	g := &rawGuest{rt: wazero.NewRuntimeWithConfig(ctx, rc), k: &benchKernel{}}
	b.Cleanup(func() { g.rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, g.rt)
	cm, err := g.rt.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	if err := g.k.instantiate(ctx, g.rt, cm); err != nil {
		b.Fatal(err)
	}
	mod, err := g.rt.InstantiateModule(ctx, cm, benchModuleConfig())
	if err != nil {
		b.Fatal(err)
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			b.Fatalf("_initialize: %v", err)
		}
	}
	if g.fn = mod.ExportedFunction(export); g.fn == nil {
		b.Fatalf("no export %q", export)
	}
	return g
}

// call runs the export with input, returning its code and output.
func (g *rawGuest) call(input []byte) (uint32, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	g.k.reset(input)
	res, err := g.fn.Call(ctx)
	if err != nil {
		return 0, nil, err
	}
	if len(res) == 1 && res[0] != 0 {
		return uint32(res[0]), nil, fmt.Errorf("error_set block %d", g.k.errorOff)
	}
	return 0, g.k.output, nil
}

// benchKernel is the least of the Extism kernel a benchmark guest needs:
// input, alloc, byte and word loads and stores, output_set and error_set,
// over one byte slice without bounds reporting (a bad offset panics, which
// wazero turns into an error). Every other import of the guest's non-WASI
// modules is a no-op that returns zeros.
type benchKernel struct {
	input    []byte
	mem      []byte
	lens     map[uint64]uint64
	output   []byte
	errorOff uint64
}

func (k *benchKernel) reset(input []byte) {
	k.input, k.mem, k.output, k.errorOff = input, k.mem[:0], nil, 0
	k.mem = append(k.mem, make([]byte, 8)...) // offset 0 means "no block"
	clear(k.lens)
}

func (k *benchKernel) funcs() map[string]api.GoFunc {
	le := binary.LittleEndian
	return map[string]api.GoFunc{
		"input_length":   func(_ context.Context, s []uint64) { s[0] = uint64(len(k.input)) },
		"input_load_u8":  func(_ context.Context, s []uint64) { s[0] = uint64(k.input[s[0]]) },
		"input_load_u64": func(_ context.Context, s []uint64) { s[0] = le.Uint64(k.input[s[0]:]) },
		"alloc": func(_ context.Context, s []uint64) {
			off := uint64(len(k.mem))
			k.mem = append(k.mem, make([]byte, (s[0]+7)&^7)...)
			k.lens[off] = s[0]
			s[0] = off
		},
		"length":    func(_ context.Context, s []uint64) { s[0] = k.lens[s[0]] },
		"load_u8":   func(_ context.Context, s []uint64) { s[0] = uint64(k.mem[s[0]]) },
		"load_u64":  func(_ context.Context, s []uint64) { s[0] = le.Uint64(k.mem[s[0]:]) },
		"store_u8":  func(_ context.Context, s []uint64) { k.mem[s[0]] = byte(s[1]) },
		"store_u64": func(_ context.Context, s []uint64) { le.PutUint64(k.mem[s[0]:], s[1]) },
		"output_set": func(_ context.Context, s []uint64) {
			k.output = k.mem[s[0] : s[0]+s[1]]
		},
		"error_set": func(_ context.Context, s []uint64) { k.errorOff = s[0] },
	}
}

// instantiate builds a host module for each non-WASI module cm imports,
// exporting every imported function with the signature cm expects.
func (k *benchKernel) instantiate(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule) error {
	k.lens = map[uint64]uint64{}
	impl := k.funcs()
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
	for mod, hb := range builders {
		if _, err := hb.Instantiate(ctx); err != nil {
			return fmt.Errorf("instantiating %s: %w", mod, err)
		}
	}
	return nil
}

// BenchmarkInstanceMemory measures what each additional live instance of a
// standard-Go guest costs the process in resident memory: N callers at
// once (N = 1, 4, 8) each hold an instance in a call that sleeps, in a new
// host each time, and the process's resident set is read meanwhile and
// after the host is closed and the memory given back (Linux only).
// mb/instance is the growth from one instance to eight, per added instance.
func BenchmarkInstanceMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		b.Skip("needs /proc/self/statm")
	}
	wasm := fixture(b, "go/gohostile/gohostile.wasm")
	rss := func() float64 {
		debug.FreeOSMemory()
		data, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			b.Fatal(err)
		}
		var size, resident int64
		fmt.Sscan(string(data), &size, &resident)
		return float64(resident*int64(os.Getpagesize())) / (1 << 20)
	}
	live := func(n int) float64 {
		ctx := context.Background()
		h, err := host.New(ctx, testConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close(ctx)
		m, err := h.Load(ctx, wasm, host.LoadOptions{Name: "gohostile"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Call(ctx, "sleep", []byte("1ms"), nil); err != nil { // takes the snapshot
			b.Fatal(err)
		}
		before := rss()
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := m.Call(ctx, "sleep", []byte("400ms"), nil); err != nil {
					b.Error(err)
				}
			}()
		}
		time.Sleep(250 * time.Millisecond)
		during := rss()
		wg.Wait()
		return during - before
	}
	var one, eight float64
	for b.Loop() {
		one, eight = live(1), live(8)
	}
	b.ReportMetric(one, "1-MB")
	b.ReportMetric(eight, "8-MB")
	b.ReportMetric((eight-one)/7, "MB/instance")
}
