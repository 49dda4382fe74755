package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

// The edges of the host's rules, each found by `make mutate` as a change
// no test noticed.

// A call may use exactly its max_fuel, not one instruction more; and a
// call counts the same fuel however often the instance it runs on was
// used before.
func TestMaxFuelIsExact(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/loop_count.wasm")
	ctx := context.Background()
	const n = "100000" // iterations: several fuel slices
	var fuel int64
	for i := range 4 {
		res, err := m.Call(ctx, "count", []byte(n), &host.CallOptions{CountFuel: true})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && res.Fuel != fuel {
			t.Fatalf("call %d counted %d instructions, the first %d", i, res.Fuel, fuel)
		}
		fuel = res.Fuel
	}
	if fuel <= 100_000 {
		t.Fatalf("the call used %d instructions; the test needs more than one slice", fuel)
	}
	for i := range 3 {
		if _, err := m.Call(ctx, "count", []byte(n), &host.CallOptions{Grant: host.Grant{Limits: host.Limits{MaxFuel: fuel}}}); err != nil {
			t.Fatalf("call %d with max_fuel %d, what it uses: %v", i, fuel, err)
		}
	}
	_, err := m.Call(ctx, "count", []byte(n), &host.CallOptions{Grant: host.Grant{Limits: host.Limits{MaxFuel: fuel - 1}}})
	wantKind(t, err, host.ErrLimit)
}

// Each call of a reused instance reaches its own tool dispatcher: one
// caller's tools (another tenant's run) never answer the next caller's
// guest.
func TestEachCallHasItsOwnDispatcher(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/tool_call.wasm")
	g := host.Grant{Tools: []string{"slugify"}}
	first, second := &recordingDispatcher{}, &recordingDispatcher{}
	for i, d := range []*recordingDispatcher{first, second, second} {
		res, err := m.Call(context.Background(), "call_tool", []byte("slugify"), &host.CallOptions{Grant: g, Tools: d})
		if err != nil {
			t.Fatal(err)
		}
		var r abi.ToolResult
		if err := json.Unmarshal(res.Output, &r); err != nil || r.IsError {
			t.Fatalf("call %d: %s, %v", i, res.Output, err)
		}
	}
	if len(first.calls) != 1 || len(second.calls) != 2 {
		t.Errorf("the first dispatcher got %d calls, the second %d; want 1 and 2", len(first.calls), len(second.calls))
	}
}

// An import that is no function is refused when the module loads, also
// when its name is one of a host function's.
func TestNonFunctionImportsAreRefused(t *testing.T) {
	h := newHost(t, testConfig())
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	for kind, desc := range map[string][]byte{
		"memory": {0x02, 0x00, 0x01},
		"table":  {0x01, 0x70, 0x00, 0x01},
		"global": {0x03, 0x7f, 0x00},
	} {
		imp := append(append(append([]byte{1}, name("extism:host/env")...), name("alloc")...), desc...)
		wasm := wasmModule(section(2, imp...))
		if _, err := h.Load(context.Background(), wasm, host.LoadOptions{Name: kind + ".wasm"}); !errors.Is(err, host.ErrUnknownImport) {
			t.Errorf("a %s imported as extism:host/env alloc: Load = %v, want ErrUnknownImport", kind, err)
		}
	}
}
