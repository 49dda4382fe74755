package host_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// Fuel is counted the same on every call and every host, grows with the
// work done, and a call that needs more than its max_fuel ends with
// ErrLimit naming the fuel — deterministically, whatever the machine's speed.
func TestFuelIsDeterministic(t *testing.T) {
	h1, h2 := newHost(t, testConfig()), newHost(t, testConfig())
	fuel := func(h *host.Host, export, input string, max int64) (int64, error) {
		t.Helper()
		res, err := load(t, h, "wat/loop_count.wasm").Call(t.Context(), export, []byte(input),
			&host.CallOptions{Grant: host.Grant{Limits: host.Limits{MaxFuel: max}}, CountFuel: true})
		if err == nil && !res.FuelCounted {
			t.Errorf("fuel not counted with CountFuel and max_fuel %d", max)
		}
		return res.Fuel, err
	}
	small, err := fuel(h1, "count", "1000", 0)
	if err != nil || small <= 1000 {
		t.Fatalf("fuel of 1000 iterations = %d, %v", small, err)
	}
	for i := 0; i < 3; i++ {
		again, _ := fuel(h2, "count", "1000", 0)
		if again != small {
			t.Fatalf("the same call used %d fuel, then %d", small, again)
		}
	}
	large, _ := fuel(h1, "count", "100000", 0)
	if large <= 50*small {
		t.Errorf("100× the iterations used %d fuel against %d", large, small)
	}

	if _, err := fuel(h1, "count", "1000", small); err != nil {
		t.Errorf("a call within its max_fuel failed: %v", err)
	}
	for _, max := range []int64{small - 1, small / 2, 1} {
		_, err := fuel(h1, "count", "1000", max)
		ce := wantKind(t, err, host.ErrLimit)
		if !strings.Contains(ce.Message, "fuel") {
			t.Errorf("max_fuel %d: message %q does not name the fuel", max, ce.Message)
		}
	}
	// Far past the deadline a spinning guest is still cut by its fuel first.
	_, err = load(t, h1, "wat/loop.wasm").Call(t.Context(), "spin", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{MaxFuel: 5_000_000}}})
	wantKind(t, err, host.ErrLimit)

	// Without a fuel limit fuel is counted with the tick check off, and
	// with it on by the instance that runs the initialisers (the first
	// call's), or until the module with the tick check is made; then, on
	// Linux, calls count none.
	res, err := load(t, newHost(t, testConfig().WithTickCheck(false)), "wat/loop_count.wasm").Call(t.Context(), "count", []byte("1000"), nil)
	if err != nil || !res.FuelCounted || res.Fuel != small {
		t.Errorf("a call without a fuel limit, tick check off: fuel %d, counted %v, %v; want %d", res.Fuel, res.FuelCounted, err, small)
	}
	lc := load(t, newHost(t, testConfig()), "wat/loop_count.wasm")
	res, err = lc.Call(t.Context(), "count", []byte("1000"), nil)
	if err != nil || !res.FuelCounted || res.Fuel != small {
		t.Errorf("the first call without a fuel limit, tick check on: fuel %d, counted %v, %v; want %d", res.Fuel, res.FuelCounted, err, small)
	}
	host.WaitTickCheck(lc)
	for i := range 3 {
		res, err = lc.Call(t.Context(), "count", []byte("1000"), nil)
		if i == 0 && res.FuelCounted && tickLinux() {
			continue // the first call's instance, counting, may be idle
		}
		if err != nil || res.FuelCounted != !tickLinux() || (res.FuelCounted && res.Fuel != small) || (!res.FuelCounted && res.Fuel != 0) {
			t.Errorf("call %d without a fuel limit, tick check on: fuel %d, counted %v, %v", i+2, res.Fuel, res.FuelCounted, err)
		}
	}

	// A Go guest, whose initialisation runs far more than its call, is
	// charged for the call only.
	g := load(t, h1, "go/gobench/gobench.wasm")
	res, err = g.Call(t.Context(), "noop", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{MaxFuel: 1000}}})
	if err != nil || res.Fuel <= 0 || res.Fuel > 1000 || !res.FuelCounted {
		t.Errorf("Go noop under max_fuel 1000: fuel %d, %v", res.Fuel, err)
	}
}

// tickLinux says whether calls without a fuel limit run with the tick
// check here: on Linux, with a ticker thread or more than one processor.
func tickLinux() bool {
	return runtime.GOOS == "linux" && (host.TickThread || runtime.GOMAXPROCS(0) > 1)
}

func TestFuelNeedsMetering(t *testing.T) {
	h := newHost(t, testConfig().WithMetering(false))
	m := load(t, h, "wat/loop_count.wasm")
	if metered, why := m.Metered(); metered || why == nil {
		t.Errorf("Metered() = %v, %v with metering off", metered, why)
	}
	_, err := m.Call(t.Context(), "count", []byte("10"), &host.CallOptions{Grant: host.Grant{Limits: host.Limits{MaxFuel: 1000}}})
	if !errors.Is(err, host.ErrBadConfig) {
		t.Errorf("max_fuel on an unmetered module: err = %v, want ErrBadConfig", err)
	}
	res, err := m.Call(t.Context(), "count", []byte("10"), &host.CallOptions{CountFuel: true})
	if err != nil || res.Fuel != 0 || res.FuelCounted {
		t.Errorf("unmetered call: fuel %d, %v", res.Fuel, err)
	}
	if metered, why := load(t, newHost(t, testConfig()), "wat/loop_count.wasm").Metered(); !metered || why != nil {
		t.Errorf("Metered() = %v, %v with metering on", metered, why)
	}
}
