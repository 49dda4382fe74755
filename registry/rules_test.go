package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// The tests of this file hold the registry's own security rules, each
// with a test that fails when the rule is taken out (see `make mutate`):
// activation that the catalog turned off, Activate under the run's
// policy, per-call config under the tool's config params, and the empty
// grant of a pack the operator says nothing about.

// With activation on first use turned off, a deferred tool answers as a
// tool that does not exist until the embedder activates it; tools loaded
// always, and hidden tools called by name, are not affected.
func TestDisableActivation(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{ToolSearch: registry.ToolSearchConfig{DisableActivation: true}})
	ctx := context.Background()
	run := newRun(t, reg, registry.RunContext{Tenant: "a"}, nil)
	res, err := run.Call(ctx, "deferred_echo", json.RawMessage(`{"a":1}`), nil)
	if !errors.Is(err, registry.ErrToolNotFound) || res != nil {
		t.Fatalf("a deferred tool with activation off: %+v, %v; want ErrToolNotFound", res, err)
	}
	if run.Visible("deferred_echo") {
		t.Error("the refused call activated the tool")
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 0 {
		t.Errorf("activation events = %+v, want none", got)
	}
	if got := ev.named(registry.EventToolActivationDenied); len(got) != 1 || got[0].Fields["tool_name"] != "deferred_echo" {
		t.Errorf("activation denied events = %+v, want one for deferred_echo", got)
	}
	for _, name := range []string{"echo_args", "hidden_echo"} {
		args := json.RawMessage(`{}`)
		if name == "echo_args" {
			args = json.RawMessage(`{"text":"x"}`)
		}
		if res, err := run.Call(ctx, name, args, nil); err != nil || res.IsError {
			t.Errorf("%s with activation off: %+v, %v", name, res, err)
		}
	}
	// The embedder may still activate it.
	if err := run.Activate(ctx, "deferred_echo", "the embedder's choice"); err != nil {
		t.Fatal(err)
	}
	if res, err := run.Call(ctx, "deferred_echo", nil, nil); err != nil || res.IsError {
		t.Errorf("after Activate: %+v, %v", res, err)
	}
	// The same registry with activation on answers the call.
	on, _ := newRegistry(t, registry.Options{})
	if res, err := newRun(t, on, registry.RunContext{Tenant: "a"}, nil).Call(ctx, "deferred_echo", nil, nil); err != nil || res.IsError {
		t.Errorf("with activation on: %+v, %v", res, err)
	}
}

// Activate refuses a tool the run's policy denies, as it refuses one that
// does not exist, and the tool stays out of the run's catalog.
func TestActivateHonoursThePolicy(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	ctx := context.Background()
	deny := registry.VisibilityFunc(func(_ registry.RunContext, tool *registry.Tool) bool { return tool.Name != "deferred_echo" })
	run := newRun(t, reg, registry.RunContext{Tenant: "a"}, &registry.RunOptions{Policy: deny})
	if err := run.Activate(ctx, "deferred_echo", "asked"); !errors.Is(err, registry.ErrToolNotFound) {
		t.Fatalf("Activate of a tool the policy denies: %v; want ErrToolNotFound", err)
	}
	if err := run.Activate(ctx, "no_such_tool", "asked"); !errors.Is(err, registry.ErrToolNotFound) {
		t.Fatalf("Activate of a tool that does not exist: %v; want ErrToolNotFound", err)
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 0 {
		t.Errorf("activation events = %+v, want none", got)
	}
	// Nothing was recorded for the run either: the policy's tool is in
	// no listing.
	if got := names(run.Tools()) + "|" + names(run.Deferred()); got != "again,echo_args,typed_out|" {
		t.Errorf("catalog after the refused activation = %s", got)
	}
	// The same activation without the policy is allowed.
	open := newRun(t, reg, registry.RunContext{Tenant: "a"}, nil)
	if err := open.Activate(ctx, "deferred_echo", "asked"); err != nil || !open.Visible("deferred_echo") {
		t.Errorf("Activate without a policy: %v, visible %v", err, open.Visible("deferred_echo"))
	}
}

// Activate under a session scope must not leave the denied tool in the
// session for a later run with a wider policy.
func TestActivateUnderThePolicyLeavesTheSessionAlone(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{ToolSearch: registry.ToolSearchConfig{ActivationScope: registry.ScopeSession}})
	ctx := context.Background()
	rc := registry.RunContext{Tenant: "a", Session: "s"}
	deny := registry.VisibilityFunc(func(_ registry.RunContext, tool *registry.Tool) bool { return tool.Name != "deferred_echo" })
	if err := newRun(t, reg, rc, &registry.RunOptions{Policy: deny}).Activate(ctx, "deferred_echo", "asked"); !errors.Is(err, registry.ErrToolNotFound) {
		t.Fatalf("Activate: %v; want ErrToolNotFound", err)
	}
	if newRun(t, reg, rc, nil).Visible("deferred_echo") {
		t.Error("a refused activation reached the session")
	}
}

// configPack is a pack whose tool declares config params, served by
// echo.wasm's echo.
const configPack = `name: c
default_loading: always
modules:
  - name: m
    path: m.wasm
    tools:
      - name: echo
        description: Returns its input.
        config_params:
          - {name: mode, type: select, options: [fast, safe]}
          - {name: retries, type: number, min: 1, max: 10}
`

// Per-call config values are checked against the tool's config params
// before the guest runs: a value out of range, an unknown key or an
// option not offered is an invalid_input result, and the guest never
// sees it.
func TestPerCallConfigIsCheckedAgainstTheParams(t *testing.T) {
	reg, err := registry.New(context.Background(), catalog(t, writePack(t, configPack, "wat/echo.wasm")),
		registry.Options{Host: newHost(t), Grants: map[string]host.Grant{"c": {}}})
	if err != nil {
		t.Fatal(err)
	}
	run := newRun(t, reg, registry.RunContext{}, nil)
	ctx := context.Background()
	args := json.RawMessage(`{"x":1}`)
	res, err := run.Call(ctx, "echo", args, &registry.CallOptions{Config: map[string]string{"mode": "safe", "retries": "3"}})
	if err != nil || res.IsError || string(res.Output) != `{"x":1}` {
		t.Fatalf("good config: %+v, %v", res, err)
	}
	for name, cfg := range map[string]map[string]string{
		"out of range":   {"retries": "30"},
		"not a number":   {"retries": "many"},
		"not an option":  {"mode": "slow"},
		"unknown key":    {"colour": "red"},
		"one bad of two": {"mode": "fast", "retries": "0"},
	} {
		res, err := run.Call(ctx, "echo", args, &registry.CallOptions{Config: cfg})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError || res.Error.Code != abi.CodeInvalidInput {
			t.Errorf("%s: %+v; want an invalid_input result", name, res)
		}
		if res.Output != nil {
			t.Errorf("%s: the guest ran: %s", name, res.Output)
		}
	}
}

// noSectionPack asks for every capability a grant can give.
const noSectionPack = `name: greedy
default_loading: always
modules:
  - name: m
    path: m.wasm
    request:
      allowed_hosts: ["api.example.com", "*"]
      mounts: [{guest: /data}]
      env: [TOKEN]
      tools: [echo]
      services: [mail.send]
    tools:
      - name: echo
        description: Returns its input.
`

// A pack that neither the embedder's grants nor the operator config names
// is granted nothing, whatever it asks for: no hosts, mounts, env, tools
// or services. Other packs' sections do not reach it. The same pack with
// a section gets what the section gives, so the check is not empty.
func TestPackWithoutASectionIsGrantedNothing(t *testing.T) {
	dir := writePack(t, noSectionPack, "wat/echo.wasm")
	data := t.TempDir()
	other := `[packs.other]
allowed_hosts = ["*"]
tools = ["*"]
services = ["mail.send"]
env = { TOKEN = "s3cret" }
mounts = [{ host = "` + data + `", guest = "/data" }]
`
	open := func(t *testing.T, toml string) *registry.Tool {
		t.Helper()
		cfg, err := packs.ParseConfig("/etc/skillhost/skillhost.toml", []byte(toml))
		if err != nil {
			t.Fatal(err)
		}
		reg, err := registry.New(context.Background(), catalog(t, dir), registry.Options{Host: newHost(t), Operator: cfg})
		if err != nil {
			t.Fatal(err)
		}
		tool, ok := reg.Tool("echo")
		if !ok {
			t.Fatalf("no echo tool; problems: %v", reg.Problems())
		}
		return tool
	}
	for name, toml := range map[string]string{"no config": "", "another pack's section": other} {
		tool := open(t, toml)
		if tool.GrantFrom != registry.GrantFromNone {
			t.Errorf("%s: GrantFrom = %q, want %q", name, tool.GrantFrom, registry.GrantFromNone)
		}
		for side, g := range map[string]host.Grant{"operator": tool.Operator, "effective": tool.Effective} {
			if len(g.AllowedHosts)+len(g.Mounts)+len(g.Env)+len(g.Tools)+len(g.Capabilities) > 0 || g.AllowPrivateNetwork {
				t.Errorf("%s: the %s grant gives %+v; want nothing", name, side, g)
			}
		}
		if len(tool.Requested.AllowedHosts) == 0 || len(tool.Requested.Tools) == 0 {
			t.Fatalf("%s: the request was not read: %+v", name, tool.Requested)
		}
	}
	// With a section of its own the pack gets what both sides name.
	tool := open(t, other+"\n"+`[packs.greedy]
allowed_hosts = ["api.example.com"]
tools = ["echo"]
services = ["mail.send"]
env = { TOKEN = "s3cret" }
mounts = [{ host = "`+data+`", guest = "/data" }]
`)
	g := tool.Effective
	if tool.GrantFrom != registry.GrantFromConfig || len(g.AllowedHosts) != 1 || len(g.Mounts) != 1 || g.Env["TOKEN"] != "s3cret" ||
		len(g.Tools) != 1 || len(g.Capabilities) != 1 {
		t.Errorf("with a section: %s grant %+v", tool.GrantFrom, g)
	}
}
