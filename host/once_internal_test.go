package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func loadOnce(t *testing.T, h *Host, rel string) *Module {
	t.Helper()
	m, err := h.Load(context.Background(), guestBytes(t, rel), LoadOptions{Name: rel, Once: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A module loaded for one call compiles the module with the tick check
// alone, runs every call in a new instance with it (initialisers
// included, so no fuel is counted), keeps no snapshot, and makes the
// module that counts fuel only for a call that counts: its fuel is what a
// module loaded as usual counts.
func TestOnceCompilesOneModule(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	ctx := context.Background()
	h := internalHost(t, NewConfig())
	m := loadOnce(t, h, "wat/state.wasm")
	if m.c.cm != nil || !m.c.tickMade.Load() {
		t.Fatalf("loaded for one call: counting module %v, tick module made %v; want only the tick module", m.c.cm != nil, m.c.tickMade.Load())
	}
	for i := range 3 {
		res, err := m.Call(ctx, "bump", nil, nil)
		if err != nil || string(res.Output) != "1001" {
			t.Fatalf("bump %d: %q, %v; want 1001 (a new instance each time)", i, res.Output, err)
		}
		if res.FuelCounted {
			t.Errorf("bump %d counted fuel; want the tick check, initialisers included", i)
		}
	}
	if len(m.freshPools()) != 0 || m.c.cm != nil {
		t.Errorf("after calls without fuel: %d fresh-state pools, counting module made %v; want none", len(m.freshPools()), m.c.cm != nil)
	}

	_, usual := internalModule(t, NewConfig(), "wat/state.wasm")
	want, err := usual.Call(ctx, "bump", nil, &CallOptions{CountFuel: true})
	if err != nil || !want.FuelCounted {
		t.Fatalf("module loaded as usual: %+v, %v", want, err)
	}
	for _, opts := range []*CallOptions{{CountFuel: true}, {Grant: Grant{Limits: Limits{MaxFuel: 1 << 40}}}} {
		res, err := m.Call(ctx, "bump", nil, opts)
		if err != nil || string(res.Output) != "1001" {
			t.Fatalf("bump counting fuel: %q, %v", res.Output, err)
		}
		if !res.FuelCounted || res.Fuel != want.Fuel {
			t.Errorf("bump counting fuel: fuel %d (counted %v), want %d as loaded as usual", res.Fuel, res.FuelCounted, want.Fuel)
		}
	}
	if m.c.cm == nil {
		t.Error("the counting module was not kept")
	}
	// A fuel limit the call exceeds stops it.
	_, err = m.Call(ctx, "bump", nil, &CallOptions{Grant: Grant{Limits: Limits{MaxFuel: 10}}})
	if !errors.Is(err, ErrLimit) {
		t.Errorf("bump with 10 instructions of fuel: %v, want ErrLimit", err)
	}
}

// The initialisers of a module loaded for one call run with the tick
// check, bounded by the call's deadline rather than the initialisation
// fuel cap; a start function that spins is stopped there, and one that
// ends runs again for every call.
func TestOnceInitialisersRunTheTickCheck(t *testing.T) {
	if !tickRuns() {
		t.Skip("no tick check here")
	}
	ctx := context.Background()
	h := internalHost(t, NewConfig().WithMaxInitFuel(1000))
	spin := loadOnce(t, h, "wat/start_spin.wasm")
	start := time.Now()
	_, err := spin.Call(ctx, "run", nil, &CallOptions{Grant: Grant{Limits: Limits{Timeout: 200 * time.Millisecond}}})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("spinning start function: %v, want ErrTimeout (the deadline, not the initialisation cap)", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("spinning start function stopped after %v, before its deadline", d)
	}
	// Counting fuel, the cap applies as for any module.
	_, err = spin.Call(ctx, "run", nil, &CallOptions{CountFuel: true})
	var ce *CallError
	if !errors.As(err, &ce) || !errors.Is(err, ErrLimit) || !strings.Contains(ce.Message, "initialisation fuel") {
		t.Errorf("spinning start function counting fuel: %v, want the initialisation fuel limit", err)
	}

	benign := loadOnce(t, h, "wat/start.wasm")
	for i := range 2 {
		res, err := benign.Call(ctx, "run", nil, nil)
		if err != nil || string(res.Output) != "1" || len(res.Logs) != 1 || res.Logs[0].Message != "started" {
			t.Errorf("call %d: %q, logs %+v, %v; want the start function run for this call", i, res.Output, res.Logs, err)
		}
	}
}

// A module loaded for one call and then as usual shares its compiled
// code: calls of the second take snapshots and count fuel in the instance
// that runs the initialisers, which needs the module that counts fuel.
func TestOnceThenAsUsual(t *testing.T) {
	ctx := context.Background()
	h := internalHost(t, NewConfig())
	once := loadOnce(t, h, "wat/state.wasm")
	usual, err := h.Load(ctx, guestBytes(t, "wat/state.wasm"), LoadOptions{Name: "state"})
	if err != nil {
		t.Fatal(err)
	}
	if usual.c != once.c {
		t.Fatal("loading the same module again compiled it again")
	}
	for i := range 3 {
		res, err := usual.Call(ctx, "bump", nil, nil)
		if err != nil || string(res.Output) != "1001" {
			t.Fatalf("bump %d: %q, %v", i, res.Output, err)
		}
		if i == 0 && !res.FuelCounted {
			t.Error("the first call's instance ran the initialisers without counting fuel")
		}
	}
	if len(usual.freshPools()) != 1 {
		t.Errorf("%d fresh-state pools, want 1", len(usual.freshPools()))
	}
	if res, err := once.Call(ctx, "bump", nil, nil); err != nil || string(res.Output) != "1001" {
		t.Errorf("bump loaded for one call: %q, %v", res.Output, err)
	}
}

// Calls of a module loaded for one call, from many goroutines at once,
// some counting fuel (the first of which makes the counting module while
// others run the tick check) and some spinning to their deadline: each
// gets what a call of its own would.
func TestOnceHammer(t *testing.T) {
	ctx := context.Background()
	h := internalHost(t, NewConfig())
	state := loadOnce(t, h, "wat/state.wasm")
	spin := loadOnce(t, h, "wat/loop.wasm")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				var opts *CallOptions
				switch (g + i) % 4 {
				case 1:
					opts = &CallOptions{CountFuel: true}
				case 2:
					opts = &CallOptions{Grant: Grant{Limits: Limits{MaxFuel: 1 << 40}}}
				case 3:
					_, err := spin.Call(ctx, "spin", nil, &CallOptions{Grant: Grant{Limits: Limits{Timeout: 20 * time.Millisecond}}})
					if !errors.Is(err, ErrTimeout) {
						t.Errorf("spin: %v, want ErrTimeout", err)
					}
					continue
				}
				res, err := state.Call(ctx, "bump", nil, opts)
				if err != nil || string(res.Output) != "1001" {
					t.Errorf("goroutine %d call %d: %q, %v; want 1001", g, i, res.Output, err)
					return
				}
				if counts := opts != nil; res.FuelCounted != counts && tickRuns() {
					t.Errorf("goroutine %d call %d: fuel counted %v, want %v", g, i, res.FuelCounted, counts)
				}
			}
		}()
	}
	wg.Wait()
}

// On a host that meters nothing, or counts all fuel, a module loaded for
// one call compiles the one module it runs and gives each call a new
// instance.
func TestOnceWithoutTheTickCheck(t *testing.T) {
	for _, cfg := range []Config{NewConfig().WithMetering(false), NewConfig().WithTickCheck(false)} {
		h := internalHost(t, cfg)
		m := loadOnce(t, h, "wat/state.wasm")
		if m.c.cm == nil || m.c.tickMade.Load() {
			t.Errorf("metering %v, tick check %v: counting module made %v, tick module made %v; want only the first",
				cfg.metering, cfg.tickCheck, m.c.cm != nil, m.c.tickMade.Load())
		}
		for i := range 2 {
			res, err := m.Call(context.Background(), "bump", nil, nil)
			if err != nil || string(res.Output) != "1001" || res.FuelCounted != cfg.metering {
				t.Errorf("metering %v, call %d: %q, fuel counted %v, %v", cfg.metering, i, res.Output, res.FuelCounted, err)
			}
		}
		if len(m.freshPools()) != 0 {
			t.Errorf("metering %v: %d fresh-state pools, want none", cfg.metering, len(m.freshPools()))
		}
	}
}
