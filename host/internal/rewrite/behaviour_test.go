package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// spinModule is (func (export "spin") (loop (br 0))).
var spinModule = mod(
	sec(secType, vec(functype(nil, nil))),
	sec(secFunction, vec(u32(0))),
	sec(secExport, vec(funcExport("spin", 0))),
	sec(secCode, vec(body(nil, 0, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b))),
)

// instantiate instruments wasm, and instantiates it in a new compiler
// runtime (close-on-context-done off, as the host runs it) beside f.
func instantiate(t *testing.T, wasm []byte, f *fuel) (api.Module, Info) {
	t.Helper()
	ctx := context.Background()
	out, info, err := Instrument(wasm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
	t.Cleanup(func() { r.Close(ctx) })
	instantiateFuel(t, ctx, r, f)
	m, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	return m, info
}

func TestSpinReachesHost(t *testing.T) {
	loopWasm, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "guests", "wat", "loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		wasm []byte
	}{
		{"hand-built", spinModule},
		{"testdata/guests/wat/loop.wasm", loopWasm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 50
			f := &fuel{slice: 1000, limit: limit}
			m, info := instantiate(t, tc.wasm, f)
			if info.Checks != 2 {
				t.Errorf("Checks = %d, want 2 (function entry and loop)", info.Checks)
			}
			_, err := m.ExportedFunction("spin").Call(context.Background())
			if !errors.Is(err, errOutOfFuel) {
				t.Fatalf("spin: err = %v, want %v", err, errOutOfFuel)
			}
			if got := f.calls.Load(); got != limit+1 {
				t.Errorf("refuel calls = %d, want %d", got, limit+1)
			}
		})
	}
}

// TestSpinStopsAtDeadline is what the host does: refuel checks the call's
// deadline. The spinning guest must stop soon after it and, meanwhile,
// let a garbage collection (stop the world) through.
func TestSpinStopsAtDeadline(t *testing.T) {
	f := &fuel{slice: 100_000}
	ctx := context.Background()
	out, _, err := Instrument(spinModule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
	defer r.Close(ctx)
	_, err = r.NewHostModuleBuilder(DefaultImportModule).NewFunctionBuilder().
		WithFunc(func(ctx context.Context) int64 {
			f.calls.Add(1)
			if err := ctx.Err(); err != nil {
				panic(sys.NewExitError(7))
			}
			return f.slice
		}).Export(DefaultImportName).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 100 * time.Millisecond
	callCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := m.ExportedFunction("spin").Call(callCtx)
		done <- err
	}()
	time.Sleep(deadline / 4)
	runtime.GC() // would wait for the spinning goroutine forever without host calls
	gcDone := time.Since(start)
	err = <-done
	elapsed := time.Since(start)
	var exit *sys.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("spin: err = %v, want exit code 7 from refuel", err)
	}
	if gcDone > deadline+time.Second || elapsed > deadline+time.Second {
		t.Errorf("GC done after %v, call returned after %v; want both soon after %v", gcDone, elapsed, deadline)
	}
	t.Logf("GC done after %v, stopped after %v with %d refuel calls", gcDone, elapsed, f.calls.Load())
}

// sumModule is
//
//	(func (export "sum") (param $n i64) (result i64) (local $i i64) (local $s i64)
//	  (block (loop
//	    (br_if 1 (i64.ge_u (local.get $i) (local.get $n)))
//	    (local.set $s (i64.add (local.get $s) (local.get $i)))
//	    (local.set $i (i64.add (local.get $i) (i64.const 1)))
//	    (br 0)))
//	  (local.get $s))
var sumModule = mod(
	sec(secType, vec(functype([]byte{0x7e}, []byte{0x7e}))),
	sec(secFunction, vec(u32(0))),
	sec(secExport, vec(funcExport("sum", 0))),
	sec(secCode, vec(body([]byte{0x02, 0x7e}, 1, sumCode...))),
)

var sumCode = []byte{
	0x02, 0x40, // block
	0x03, 0x40, // loop
	0x20, 0x01, 0x20, 0x00, 0x5a, 0x0d, 0x01, // br_if 1 (i64.ge_u i n)
	0x20, 0x02, 0x20, 0x01, 0x7c, 0x21, 0x02, // s += i
	0x20, 0x01, 0x42, 0x01, 0x7c, 0x21, 0x01, // i++
	0x0c, 0x00, // br 0
	0x0b, 0x0b, // end loop, end block
	0x20, 0x02, 0x0b, // s, end
}

// Costs of sumModule's checks: the entry runs block, loop; the loop head
// runs local.get, local.get, i64.ge_u, br_if before its first branch.
const sumEntryCost, sumLoopCost = 2, 4

func TestSumOutput(t *testing.T) {
	out, info, err := Instrument(sumModule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(cost byte) []byte {
		return []byte{
			0x23, 0x00, 0x42, cost, 0x7d, 0x24, 0x00, // budget -= cost
			0x23, 0x00, 0x42, 0x00, 0x59, 0x04, 0x40, 0x05, // if budget >= 0 {} else
			0x10, 0x00, 0x24, 0x00, 0x0b, // budget = refuel()
		}
	}
	// At the loop's head: if budget < 0 { budget = refuel() + cost; br
	// back to the loop, which takes cost again }.
	loopCheck := func(cost byte) []byte {
		return []byte{
			0x23, 0x00, 0x42, cost, 0x7d, 0x24, 0x00, // budget -= cost
			0x23, 0x00, 0x42, 0x00, 0x53, 0x04, 0x40, // if budget < 0
			0x10, 0x00, 0x42, cost, 0x7c, 0x24, 0x00, // budget = refuel() + cost
			0x0c, 0x01, 0x0b, // br 1 (the loop), end
		}
	}
	code := cat(check(sumEntryCost), sumCode[:4], loopCheck(sumLoopCost), sumCode[4:])
	want := mod(
		sec(secType, vec(functype([]byte{0x7e}, []byte{0x7e}), functype(nil, []byte{0x7e}))),
		sec(secImport, vec(funcImport(DefaultImportModule, DefaultImportName, 1))),
		sec(secFunction, vec(u32(0))),
		sec(secGlobal, vec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})),
		sec(secExport, vec(funcExport("sum", 1), cat(str(BudgetExport), []byte{0x03, 0x00}))),
		sec(secCode, vec(body([]byte{0x02, 0x7e}, 1, code...))),
	)
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
	if d := cmp.Diff(Info{BudgetExport: BudgetExport, RefuelFunc: 0, Checks: 2}, info); d != "" {
		t.Errorf("info (-want +got):\n%s", d)
	}
}

func TestSumSameResult(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
	defer r.Close(ctx)
	orig, err := r.Instantiate(ctx, sumModule)
	if err != nil {
		t.Fatal(err)
	}
	const slice = 1000
	for _, n := range []uint64{0, 1, 10, 1000, 100_000, 1_000_000} {
		f := &fuel{slice: slice}
		m, _ := instantiate(t, sumModule, f)
		want, err := orig.ExportedFunction("sum").Call(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.ExportedFunction("sum").Call(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" || got[0] != n*(n-1)/2 {
			t.Errorf("sum(%d) = %v, want %v = %d (-want +got):\n%s", n, got, want, n*(n-1)/2, d)
		}
		// The budget starts at 0: the entry check refuels at once, then
		// every slice units of fuel, plus the overshoot below zero (less
		// than one check's cost) that refuel's return value discards.
		fuel := int64(sumEntryCost + (n+1)*sumLoopCost)
		calls := f.calls.Load()
		if lo, hi := fuel/(slice+sumLoopCost), fuel/slice+2; calls < lo || calls > hi {
			t.Errorf("sum(%d): %d refuel calls for %d fuel, want %d..%d", n, calls, fuel, lo, hi)
		}
	}
}

// fibModule imports env.id (i32) -> i32 and defines a loop-free recursive
// fib (function 1) and main (function 2) = id(fib(n)): only function
// entries check the budget, and the added import moves both.
var fibModule = mod(
	sec(secType, vec(functype([]byte{0x7f}, []byte{0x7f}))),
	sec(secImport, vec(funcImport("env", "id", 0))),
	sec(secFunction, vec(u32(0), u32(0))),
	sec(secExport, vec(funcExport("fib", 1), funcExport("main", 2))),
	sec(secCode, vec(
		body(nil, 0,
			0x20, 0x00, 0x41, 0x02, 0x49, // n < 2
			0x04, 0x7f, 0x20, 0x00, // if (result i32) n
			0x05,                                     // else
			0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x01, // fib(n-1)
			0x20, 0x00, 0x41, 0x02, 0x6b, 0x10, 0x01, // fib(n-2)
			0x6a, 0x0b, 0x0b), // add, end if, end
		body(nil, 0, 0x20, 0x00, 0x10, 0x01, 0x10, 0x00, 0x0b), // id(fib(n))
	)),
)

func TestRecursionReachesHost(t *testing.T) {
	ctx := context.Background()
	f := &fuel{slice: 100}
	out, info, err := Instrument(fibModule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.RefuelFunc != 1 || info.Checks != 2 {
		t.Errorf("info = %+v, want RefuelFunc 1 and 2 checks", info)
	}
	r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
	defer r.Close(ctx)
	instantiateFuel(t, ctx, r, f)
	_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(x uint32) uint32 { return x }).Export("id").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.ExportedFunction("main").Call(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 6765 {
		t.Errorf("main(20) = %d, want 6765", got[0])
	}
	// fib(20) makes 21891 calls of entry cost 4 (local.get, i32.const,
	// i32.lt_u, if); main adds 2 (local.get, call). Each slice of 100 also
	// absorbs an overshoot of less than 4.
	const fuel = 21891*4 + 2
	if calls := f.calls.Load(); calls < fuel/104 || calls > fuel/100+2 {
		t.Errorf("%d refuel calls, want %d..%d", calls, fuel/104, fuel/100+2)
	}
}

// TestSumFuelExact books fuel as the host does (at each refuel, what was
// handed out less what is left of the budget, the overdraft included) and
// finds the same total for every slice: a loop head that refuels takes its
// cost once, though it checks again after the call.
func TestSumFuelExact(t *testing.T) {
	ctx := context.Background()
	for _, slice := range []int64{1, 3, 4, 5, 7, 1000} {
		r := wazero.NewRuntimeWithConfig(ctx, compilerConfig())
		var budget api.Global
		var given, used, calls int64
		_, err := r.NewHostModuleBuilder(DefaultImportModule).NewFunctionBuilder().
			WithFunc(func(context.Context) int64 {
				calls++
				used += given - int64(budget.Get())
				given = slice
				return slice
			}).Export(DefaultImportName).Instantiate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out, info, err := Instrument(sumModule, Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Instantiate(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		budget = m.ExportedGlobal(info.BudgetExport)
		const n = 100
		res, err := m.ExportedFunction("sum").Call(ctx, n)
		if err != nil || res[0] != n*(n-1)/2 {
			t.Fatalf("slice %d: sum(%d) = %v, %v", slice, n, res, err)
		}
		used += given - int64(budget.Get())
		if want := int64(sumEntryCost + (n+1)*sumLoopCost); used != want {
			t.Errorf("slice %d: %d fuel booked over %d refuels, want %d", slice, used, calls, want)
		}
		r.Close(ctx)
	}
}
