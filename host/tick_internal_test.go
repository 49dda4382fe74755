package host

import (
	"context"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The tick flag's address is found in wazero's internals (see
// globalValueAddr), which a new wazero version may change: then the host
// has no ticker and this test fails, naming the version.
func TestTickFlagLayout(t *testing.T) {
	if !tickSupported {
		t.Skip("no tick check on this system")
	}
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithTickCheck(true))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if h.tick == nil {
		version := "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, d := range bi.Deps {
				if d.Path == "github.com/tetratelabs/wazero" {
					version = d.Version
				}
			}
		}
		t.Fatalf("no ticker with wazero %s (written for v1.12.0): %v", version, h.tickOff)
	}
	// (module (import "skillhost:tick" "flag" (global (mut i64)))
	//   (func (export "get") (result i64) global.get 0))
	wasm := []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
		0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7e,
		0x02, 0x18, 0x01, 0x0e, 's', 'k', 'i', 'l', 'l', 'h', 'o', 's', 't', ':', 't', 'i', 'c', 'k',
		0x04, 'f', 'l', 'a', 'g', 0x03, 0x7e, 0x01,
		0x03, 0x02, 0x01, 0x00,
		0x07, 0x07, 0x01, 0x03, 'g', 'e', 't', 0x00, 0x00,
		0x0a, 0x06, 0x01, 0x04, 0x00, 0x23, 0x00, 0x0b,
	}
	mod, err := h.rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	get := mod.ExportedFunction("get")
	for _, v := range []uint64{0, 1, 7, 1 << 40, 0} {
		atomic.StoreUint64(h.tick.flag, v)
		res, err := get.Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != v {
			t.Fatalf("a guest reads the flag as %d after the host wrote %d", res[0], v)
		}
	}
}

// The timer runs while calls are in flight and stops after the last.
func TestTickerStopsWhenIdle(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	ctx := context.Background()
	h, m := internalModule(t, NewConfig().WithTickCheck(true), "wat/loop_count.wasm")
	armed := func() bool {
		h.tick.mu.Lock()
		defer h.tick.mu.Unlock()
		return h.tick.armed
	}
	if armed() {
		t.Fatal("the timer runs before any call")
	}
	h.tick.start()
	if !armed() {
		t.Fatal("the timer did not start with the first call")
	}
	h.tick.stop()
	m.c.waitTick(h)
	if _, err := m.Call(ctx, "count", []byte("1000"), nil); err != nil {
		t.Fatal(err) // its instance runs the initialisers, counting
	}
	res, err := m.Call(ctx, "count", []byte("1000"), nil)
	if err != nil || res.FuelCounted {
		t.Fatalf("count: fuel counted %v, %v", res.FuelCounted, err)
	}
	for deadline := time.Now().Add(time.Minute); armed(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the timer still runs a minute after the last call")
		}
	}
}

// Module.PrepareTickCheck makes the module with the tick check before it
// returns; without it, nothing is made before the first call without a
// fuel limit; with the tick check off, nothing is made.
func TestPrepareTickCheck(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	for _, tc := range []struct {
		name          string
		tick, prepare bool
	}{{"prepared", true, true}, {"not prepared", true, false}, {"tick check off", false, true}} {
		h, m := internalModule(t, NewConfig().WithTickCheck(tc.tick), "wat/loop_count.wasm")
		if tc.prepare {
			m.PrepareTickCheck()
		}
		if got, want := m.c.tickReady(h), tc.tick && tc.prepare; got != want {
			t.Errorf("%s: made: %v, want %v", tc.name, got, want)
		}
	}
}

// tickRuns says whether calls without a fuel limit run the tick check
// here (see Host.tickAllowed).
func tickRuns() bool { return tickSupported && (tickThreadSupported || runtime.GOMAXPROCS(0) > 1) }

// With one processor calls run the tick check when the ticker has a
// thread of its own, and count fuel when it does not, also once the module
// with the tick check is made; the pool keeps reusing their instances.
func TestOneProcessor(t *testing.T) {
	if !tickSupported {
		t.Skip("no tick check on this system")
	}
	ctx := context.Background()
	h, m := internalModule(t, NewConfig(), "wat/loop_count.wasm")
	m.PrepareTickCheck()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var first *instance
	for i := range 3 {
		res, err := m.Call(ctx, "count", []byte("1000"), nil)
		if err != nil || res.FuelCounted == (tickThreadSupported && i > 0) {
			t.Fatalf("call %d on one processor: fuel counted %v, %v", i, res.FuelCounted, err)
		}
		if i == 0 {
			continue // the instance that initialised, counting fuel, may retire
		}
		sameIdleInstance(t, m.freshPools()[profile(Grant{}, h.cfg.resolve(Limits{}))], &first, i)
	}
}

// The ticker thread starts with the first call that runs the tick check
// and has exited when the host is closed.
func TestTickerThreadExits(t *testing.T) {
	if !tickSupported || !tickThreadSupported {
		t.Skip("no ticker thread here")
	}
	ctx := context.Background()
	h, m := internalModule(t, NewConfig(), "wat/loop_count.wasm")
	m.PrepareTickCheck()
	for range 2 {
		if _, err := m.Call(ctx, "count", []byte("1000"), nil); err != nil {
			t.Fatal(err)
		}
	}
	tk := h.tick
	tk.mu.Lock()
	page := tk.thread
	tk.mu.Unlock()
	if page == nil || !tk.threadAlive() {
		t.Fatal("no ticker thread runs after a call with the tick check")
	}
	h.Close(ctx)
	// The page is released once the kernel has cleared its exit word.
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if tk.thread != nil {
		t.Error("the ticker thread still runs after Close")
	}
}

// A module gets the module with the tick check only once one of its calls
// without a fuel limit has counted more than tickAfterFuel instructions;
// then its calls run it.
func TestLongCallMakesTheTickModule(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	h, m := internalModule(t, NewConfig(), "wat/loop_count.wasm")
	ctx := context.Background()
	short, err := m.Call(ctx, "count", []byte("1000"), nil)
	if err != nil || !short.FuelCounted {
		t.Fatalf("short call: fuel counted %v, %v", short.FuelCounted, err)
	}
	if m.c.tickDone != nil {
		t.Fatal("a short call started making the module with the tick check")
	}
	// Fuel grows with the iterations: enough of them to pass the mark.
	n := tickAfterFuel/(short.Fuel/1000) + 1000
	long, err := m.Call(ctx, "count", []byte(strconv.FormatInt(n, 10)), nil)
	if err != nil || !long.FuelCounted || long.Fuel <= tickAfterFuel {
		t.Fatalf("long call: fuel %d, counted %v, %v", long.Fuel, long.FuelCounted, err)
	}
	if m.c.tickDone == nil {
		t.Fatal("a long call did not start making the module with the tick check")
	}
	m.c.waitTick(h)
	for i := range 2 {
		res, err := m.Call(ctx, "count", []byte("1000"), nil)
		if err != nil || (i > 0 && res.FuelCounted) {
			t.Errorf("call %d after the long one: fuel counted %v, %v", i, res.FuelCounted, err)
		}
	}
}
