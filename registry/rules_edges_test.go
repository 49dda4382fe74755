package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// The edges of the registry's rules, each found by `make mutate` as a
// change no test noticed.

// A catalog configuration that cannot work is refused when the registry
// is made.
func TestToolSearchConfigIsChecked(t *testing.T) {
	for name, c := range map[string]registry.ToolSearchConfig{
		"activation scope": {ActivationScope: "forever"},
		"default loading":  {DefaultLoading: "sometimes"},
	} {
		_, err := registry.New(context.Background(), catalog(t, writePack(t, testPack, "wat/tool_call.wasm")),
			registry.Options{Host: newHost(t), ToolSearch: c})
		if !errors.Is(err, registry.ErrBadConfig) {
			t.Errorf("%s: New = %v, want ErrBadConfig", name, err)
		}
	}
}

// Names that are no tool are neither visible, reachable nor findable; a
// hidden tool is reachable by its name and never findable.
func TestUnknownAndHiddenNames(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{})
	run := newRun(t, reg, registry.RunContext{}, nil)
	for _, name := range []string{"no_such_tool", ""} {
		if run.Visible(name) || run.Reachable(name) || run.Findable(name) {
			t.Errorf("%q: visible %v, reachable %v, findable %v", name, run.Visible(name), run.Reachable(name), run.Findable(name))
		}
	}
	if !run.Reachable("hidden_echo") || run.Findable("hidden_echo") || run.Visible("hidden_echo") {
		t.Errorf("hidden_echo: reachable %v, findable %v, visible %v; want true, false, false",
			run.Reachable("hidden_echo"), run.Findable("hidden_echo"), run.Visible("hidden_echo"))
	}
	if !run.Findable("deferred_echo") || !run.Findable("echo_args") {
		t.Error("a listed tool is not findable")
	}
}

// Activating a tool that is loaded from the start is no activation: no
// event, and the run's listener is not told.
func TestActivateALoadedTool(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	var told []string
	run := newRun(t, reg, registry.RunContext{}, &registry.RunOptions{OnActivate: func(n string) { told = append(told, n) }})
	if err := run.Activate(context.Background(), "echo_args", "asked"); err != nil {
		t.Fatal(err)
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 0 || len(told) != 0 {
		t.Errorf("activation events %+v, told %q; want none", got, told)
	}
}

// A tool matching an always-loaded pattern is in every run's catalog from
// the start, whatever its loading mode.
func TestAlwaysLoadedPatterns(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{ToolSearch: registry.ToolSearchConfig{AlwaysLoaded: []string{"deferred_*"}}})
	run := newRun(t, reg, registry.RunContext{}, nil)
	if got := names(run.Tools()); got != "again,deferred_echo,echo_args,typed_out" {
		t.Errorf("catalog = %s", got)
	}
	if got := names(run.Deferred()); got != "" {
		t.Errorf("deferred = %s, want none", got)
	}
}

// hiddenDeferredPack has a hidden tool that is also deferred.
const hiddenDeferredPack = `name: h
modules:
  - name: m
    path: m.wasm
    tools:
      - name: hidden_deferred
        export: echo_args
        description: Returns its arguments; neither listed nor loaded.
        hidden: true
        loading: deferred
`

// A hidden tool is called by its name without an activation, even one
// that is deferred and with activation on first use turned off.
func TestHiddenDeferredToolNeedsNoActivation(t *testing.T) {
	for _, off := range []bool{false, true} {
		ev := &events{}
		reg, err := registry.New(context.Background(), catalog(t, writePack(t, hiddenDeferredPack, "wat/tool_call.wasm")),
			registry.Options{Host: newHost(t), Events: ev, ToolSearch: registry.ToolSearchConfig{DisableActivation: off}})
		if err != nil {
			t.Fatal(err)
		}
		run := newRun(t, reg, registry.RunContext{}, nil)
		if res, err := run.Call(context.Background(), "hidden_deferred", nil, nil); err != nil || res.IsError {
			t.Errorf("activation off %v: %+v, %v", off, res, err)
		}
		if got := ev.named(registry.EventToolActivated); len(got) != 0 {
			t.Errorf("activation off %v: activation events %+v, want none", off, got)
		}
		if got := ev.named(registry.EventToolActivationDenied); len(got) != 0 {
			t.Errorf("activation off %v: denied events %+v, want none", off, got)
		}
	}
}

// Arguments are trimmed of surrounding space, and no arguments are the
// empty object the tool then receives.
func TestArgumentsTrimmedAndDefaulted(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{})
	run := newRun(t, reg, registry.RunContext{}, nil)
	ctx := context.Background()
	if res, err := run.Call(ctx, "echo_args", json.RawMessage(" \n{\"text\":\"x\"}\t "), nil); err != nil || res.IsError || string(res.Output) != `{"text":"x"}` {
		t.Errorf("arguments with space around them: %+v, %v", res, err)
	}
	// Valid arguments in forms a quick check may leave to the validator.
	for _, args := range []string{`{"text":"\u0041\n"}`, `{ "text" : "x" , "n" : 1e0 }`, `{"n":0,"text":"caf\u00e9"}`, `{"text":"x","n":10000000000000000000000}`} {
		if res, err := run.Call(ctx, "echo_args", json.RawMessage(args), nil); err != nil || res.IsError {
			t.Errorf("valid arguments %s: %+v, %v", args, res, err)
		}
	}
	for _, args := range []json.RawMessage{nil, json.RawMessage("  ")} {
		if res, err := run.Call(ctx, "hidden_echo", args, nil); err != nil || res.IsError || string(res.Output) != `{}` {
			t.Errorf("arguments %q: %+v, %v; want the output {}", args, res, err)
		}
	}
}

// A native tool has no config params: per-call config is not checked
// against them, and the call runs.
func TestNativeToolIgnoresPerCallConfig(t *testing.T) {
	reg, err := registry.New(context.Background(), catalog(t), registry.Options{
		Natives: []registry.Native{schemaTool{name: "native", schema: `{"type":"object"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := newRun(t, reg, registry.RunContext{}, nil)
	res, err := run.Call(context.Background(), "native", nil, &registry.CallOptions{Config: map[string]string{"any": "value"}})
	if err != nil || res.IsError {
		t.Errorf("a native tool with per-call config: %+v, %v", res, err)
	}
}

// NarrowGrant never adds what the effective grant lacks: private network
// only if both allow it, config values as the effective grant has them,
// and the effective grant's isolation unless the section asks for a
// process of its own.
func TestNarrowGrantEdges(t *testing.T) {
	eff := host.Grant{
		AllowPrivateNetwork: true,
		Config:              map[string]string{"mode": "safe"},
		Isolation:           host.IsolationInProcess,
		Limits:              host.Limits{Timeout: time.Minute},
	}
	g := registry.NarrowGrant(eff, packs.PackGrant{}, nil)
	if g.AllowPrivateNetwork {
		t.Error("a section without allow_private_network kept the private network")
	}
	if g.Config["mode"] != "safe" {
		t.Errorf("config = %v, want the effective grant's", g.Config)
	}
	if g.Isolation != host.IsolationInProcess {
		t.Errorf("isolation = %q, want the effective grant's %q", g.Isolation, host.IsolationInProcess)
	}
	if g.Limits.Timeout != time.Minute {
		t.Errorf("timeout = %v, want the effective grant's", g.Limits.Timeout)
	}
	g = registry.NarrowGrant(eff, packs.PackGrant{AllowPrivateNetwork: true, Isolation: host.IsolationProcess,
		Limits: host.Limits{Timeout: time.Second}}, nil)
	if !g.AllowPrivateNetwork || g.Isolation != host.IsolationProcess || g.Limits.Timeout != time.Second {
		t.Errorf("narrowed by a section that allows them: %+v", g)
	}
	if g := registry.NarrowGrant(host.Grant{}, packs.PackGrant{AllowPrivateNetwork: true}, nil); g.AllowPrivateNetwork {
		t.Error("a section added the private network the effective grant lacks")
	}
}

// isolationPack is a pack of one tool, for the isolation its grant gets.
const isolationPack = `name: iso
default_loading: always
modules:
  - name: m
    path: m.wasm
    tools:
      - name: iso_echo
        export: echo_args
        description: Returns its arguments.
`

// The operator decides how a pack's tools are isolated: its section,
// else the [sandbox] default, else the host's; a manifest cannot choose.
func TestIsolationIsTheOperators(t *testing.T) {
	dir := writePack(t, isolationPack, "wat/tool_call.wasm")
	for _, tc := range []struct {
		name, toml string
		want       host.Isolation
		wantEff    host.Isolation
		from       registry.Origin
	}{
		{"nothing", "", host.IsolationInProcess, host.IsolationDefault, registry.OriginDefault},
		{"[sandbox]", "[sandbox]\nisolation = \"process\"\n", host.IsolationProcess, host.IsolationProcess, registry.OriginOperatorDefault},
		{"the section", "[packs.iso]\nisolation = \"process\"\n", host.IsolationProcess, host.IsolationProcess, registry.OriginOperator},
		{"the section over [sandbox]", "[sandbox]\nisolation = \"process\"\n[packs.iso]\nisolation = \"in-process\"\n",
			host.IsolationInProcess, host.IsolationInProcess, registry.OriginOperator},
	} {
		cfg, err := packs.ParseConfig("/etc/skillhost/skillhost.toml", []byte(tc.toml))
		if err != nil {
			t.Fatal(err)
		}
		reg, err := registry.New(context.Background(), catalog(t, dir), registry.Options{Host: newHost(t), Operator: cfg})
		if err != nil {
			t.Fatal(err)
		}
		tool, ok := reg.Tool("iso_echo")
		if !ok {
			t.Fatalf("%s: no tool; problems %v", tc.name, reg.Problems())
		}
		if tool.Isolation != tc.want || tool.Effective.Isolation != tc.wantEff || tool.IsolationFrom != tc.from {
			t.Errorf("%s: isolation %q (effective %q) from %q; want %q (%q) from %q",
				tc.name, tool.Isolation, tool.Effective.Isolation, tool.IsolationFrom, tc.want, tc.wantEff, tc.from)
		}
	}
}

// greedyLimitsPack asks for limits past every default ceiling.
const greedyLimitsPack = `name: greedy
default_loading: always
modules:
  - name: m
    path: m.wasm
    limits: {timeout: 10h, max_memory: 3GiB, max_output: 1GiB}
    tools:
      - name: greedy_echo
        export: echo_args
        description: Returns its arguments.
`

// A manifest lowers a limit, never raises it: with no section, its limits
// are held to the defaults, which the operator's grant then shows.
func TestManifestLimitsHeldToTheDefaults(t *testing.T) {
	reg, err := registry.New(context.Background(), catalog(t, writePack(t, greedyLimitsPack, "wat/tool_call.wasm")),
		registry.Options{Host: newHost(t)})
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Tool("greedy_echo")
	if !ok {
		t.Fatalf("no tool; problems %v", reg.Problems())
	}
	eff, op := tool.Effective.Limits, tool.Operator.Limits
	if eff.Timeout == 0 || eff.Timeout > host.DefaultTimeout || eff.MaxMemoryBytes == 0 || eff.MaxMemoryBytes >= 3<<30 ||
		eff.MaxOutputBytes == 0 || eff.MaxOutputBytes >= 1<<30 {
		t.Errorf("effective limits %+v: want the defaults at most", eff)
	}
	if op.Timeout == 0 || op.MaxMemoryBytes == 0 {
		t.Errorf("operator limits %+v: want the defaults filled in", op)
	}
}

// runProvider answers every capability call and counts them.
type runProvider struct{ n atomic.Int32 }

func (p *runProvider) CallService(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	p.n.Add(1)
	return json.RawMessage(`{"sent":true}`), nil
}

// A run's own service provider answers its Wasm tools' capability calls,
// instead of the registry's; and a run that counts fuel reports it.
func TestRunServicesAndFuel(t *testing.T) {
	regMail, runMail := &mailProvider{}, &runProvider{}
	reg, _ := capsRegistry(t, map[string]host.Grant{"c": {Capabilities: allCaps}}, map[string]host.ServiceProvider{"mail": regMail})
	run := newRun(t, reg, registry.RunContext{Tenant: "t"}, &registry.RunOptions{Services: runMail, CountFuel: true})
	if tr := capResult(t, run, "c_send", `{"to":"a@example.com"}`); tr.IsError {
		t.Fatalf("send: %+v", tr)
	}
	if runMail.n.Load() != 1 || len(regMail.seen()) != 0 {
		t.Errorf("the run's provider answered %d calls, the registry's saw %q; want the run's alone", runMail.n.Load(), regMail.seen())
	}
	res, err := run.Call(context.Background(), "c_send", json.RawMessage(`{}`), nil)
	if err != nil || !res.FuelCounted || res.Fuel == 0 {
		t.Errorf("a run that counts fuel: counted %v, fuel %d, %v", res.FuelCounted, res.Fuel, err)
	}
}

// Concurrent first calls of one deferred tool activate it once.
func TestConcurrentFirstUseActivatesOnce(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	var mu sync.Mutex
	var told []string
	run := newRun(t, reg, registry.RunContext{}, &registry.RunOptions{OnActivate: func(n string) {
		mu.Lock()
		told = append(told, n)
		mu.Unlock()
	}})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := run.Call(context.Background(), "deferred_echo", nil, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := ev.named(registry.EventToolActivated); len(got) != 1 || !slices.Equal(told, []string{"deferred_echo"}) {
		t.Errorf("%d activation events, told %q; want one", len(got), told)
	}
}

// A tool's failure keeps its own code through the call.
func TestToolErrorKeepsItsCode(t *testing.T) {
	refuses, err := registry.Func("refuses", func(context.Context, struct{}) (struct{}, error) {
		return struct{}{}, &registry.ToolError{Code: abi.CodePermissionDenied, Message: "no"}
	}, &registry.FuncOptions{Description: "Refuses.", Loading: packs.LoadingAlways})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(context.Background(), catalog(t), registry.Options{Natives: []registry.Native{refuses}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := newRun(t, reg, registry.RunContext{}, nil).Call(context.Background(), "refuses", nil, nil)
	if err != nil || !res.IsError || res.Error.Code != abi.CodePermissionDenied {
		t.Errorf("Call = %+v, %v; want the tool's permission_denied", res, err)
	}
}

// A run's section narrows a tool's config to nothing new: the values stay
// the effective grant's even where the section gives others.
func TestNarrowGrantKeepsTheEffectiveConfig(t *testing.T) {
	other, ok := packs.NewConfigValue("other")
	if !ok {
		t.Fatal("NewConfigValue refused a string")
	}
	m := &packs.Module{Request: packs.Request{Config: map[string]string{"k": "default"}}}
	g := registry.NarrowGrant(host.Grant{Config: map[string]string{"k": "v"}}, packs.PackGrant{Config: map[string]packs.ConfigValue{"k": other}}, m)
	if g.Config["k"] != "v" {
		t.Errorf("config = %v, want the effective grant's k=v", g.Config)
	}
}

// failPack declares an output schema on a tool that fails: the failure
// keeps the guest's code, unchecked against the schema.
const failPack = `name: f
default_loading: always
modules:
  - name: m
    path: m.wasm
    tools:
      - name: typed_fail
        export: fail_json
        description: Fails with a structured error.
        output_schema: {type: object, required: [count]}
      - name: plain_fail
        export: fail_json
        description: Fails with a structured error.
`

func TestFailureIsNotCheckedAgainstTheOutputSchema(t *testing.T) {
	reg, err := registry.New(context.Background(), catalog(t, writePack(t, failPack, "wat/echo.wasm")),
		registry.Options{Host: newHost(t), Grants: map[string]host.Grant{"f": {}}})
	if err != nil {
		t.Fatal(err)
	}
	run := newRun(t, reg, registry.RunContext{}, nil)
	typed, err1 := run.Call(context.Background(), "typed_fail", nil, nil)
	plain, err2 := run.Call(context.Background(), "plain_fail", nil, nil)
	if err1 != nil || err2 != nil || !typed.IsError || !plain.IsError {
		t.Fatalf("calls: %+v, %v; %+v, %v", typed, err1, plain, err2)
	}
	if typed.Error.Code != plain.Error.Code || typed.Error.Message != plain.Error.Message {
		t.Errorf("with an output schema the failure is %+v, without %+v; want the same", typed.Error, plain.Error)
	}
}

// A schema the quick check has no plan for (anyOf) leaves every call to
// the full validator, which passes valid arguments and refuses the others.
func TestArgumentsBeyondTheQuickCheck(t *testing.T) {
	reg, err := registry.New(context.Background(), catalog(t), registry.Options{
		Natives: []registry.Native{schemaTool{name: "either", schema: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := newRun(t, reg, registry.RunContext{}, nil)
	for args, ok := range map[string]bool{`{"a":"x"}`: true, `{"a":1}`: true, `{}`: true, `{"a":1.5}`: false, `{"a":[]}`: false} {
		res, err := run.Call(context.Background(), "either", json.RawMessage(args), nil)
		if err != nil || res.IsError == ok {
			t.Errorf("%s: %+v, %v; want accepted %v", args, res, err, ok)
		}
	}
}
