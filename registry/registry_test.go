package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// testPack is a pack of tool_call.wasm's exports: echo_args with an input
// schema, a deferred and a hidden twin, and again, which calls itself.
const testPack = `name: t
default_loading: always
modules:
  - name: m
    path: m.wasm
    request:
      tools: [again]
    tools:
      - name: echo_args
        description: Returns its arguments.
        input_schema:
          type: object
          required: [text]
          additionalProperties: false
          properties:
            text: {type: string, minLength: 1}
            n: {type: integer, minimum: 0}
      - name: deferred_echo
        export: echo_args
        description: Returns its arguments, once activated.
        loading: deferred
      - name: hidden_echo
        export: echo_args
        description: Returns its arguments; not listed.
        hidden: true
      - name: typed_out
        export: echo_args
        description: Returns its arguments, which must have a count.
        output_schema: {type: object, required: [count]}
      - name: again
        description: Calls itself.
`

// catalog loads the packs in dirs.
func catalog(t *testing.T, dirs ...string) *packs.Catalog {
	t.Helper()
	var specs []packs.SourceSpec
	for _, d := range dirs {
		specs = append(specs, packs.SourceSpec{Name: packs.SourceInstalled, Dir: d})
	}
	cat, err := packs.LoadCatalog(context.Background(), specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func writePack(t *testing.T, manifest, fixture string) string {
	t.Helper()
	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newHost(t *testing.T) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), host.NewConfig().WithCacheDir(testenv.CacheDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// events records every event.
type events struct {
	mu  sync.Mutex
	all []registry.Event
}

func (e *events) Event(_ context.Context, ev registry.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) named(name string) []registry.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []registry.Event
	for _, ev := range e.all {
		if ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

func newRegistry(t *testing.T, opts registry.Options) (*registry.Registry, *events) {
	t.Helper()
	ev := &events{}
	if opts.Host == nil {
		opts.Host = newHost(t)
	}
	opts.Events = ev
	if opts.Grants == nil {
		opts.Grants = map[string]host.Grant{"t": {Tools: []string{"again"}}}
	}
	reg, err := registry.New(context.Background(), catalog(t, writePack(t, testPack, "wat/tool_call.wasm")), opts)
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	return reg, ev
}

func newRun(t *testing.T, reg *registry.Registry, rc registry.RunContext, opts *registry.RunOptions) *registry.Run {
	t.Helper()
	run, err := reg.NewRun(rc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func names(tools []*registry.Tool) string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

// Arguments are validated by the host against the tool's input schema
// before the guest runs, whatever the guest: every violation is reported
// with its JSON path in a tool error the model can read.
func TestArgumentsAreValidatedBeforeTheGuestRuns(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{})
	run := newRun(t, reg, registry.RunContext{}, nil)
	ctx := context.Background()
	res, err := run.Call(ctx, "echo_args", json.RawMessage(`{"text":"hi","n":2}`), nil)
	if err != nil || res.IsError || string(res.Output) != `{"text":"hi","n":2}` {
		t.Fatalf("valid call: %+v, %v", res, err)
	}
	for args, want := range map[string]string{
		`{"text":5}`:            `arguments for "echo_args" do not match its input schema: $.text: must be a string, got number`,
		`{"text":"","n":-1}`:    `$.n: is -1; must be at least 0; $.text: must not be empty`,
		`{"n":1}`:               `$: missing required field "text"`,
		`{"text":"x","m":1}`:    `$: unknown field "m"`,
		`[1,2]`:                 `arguments for "echo_args" must be a JSON object, got an array`,
		`"text"`:                `must be a JSON object, got a string`,
		`{"text":`:              `are not valid JSON`,
		`{"text":"a","text":1}`: `$.text: must be a string, got number`,
	} {
		res, err := run.Call(ctx, "echo_args", json.RawMessage(args), nil)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if !res.IsError || res.Error.Code != abi.CodeInvalidInput || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%s: %+v, want invalid_input containing %q", args, res.Error, want)
		}
		if res.Output != nil || len(res.Logs) > 0 {
			t.Errorf("%s: the guest ran: %s", args, res.Output)
		}
	}
	// Output is checked against a declared output schema.
	res, _ = run.Call(ctx, "typed_out", json.RawMessage(`{"text":"x"}`), nil)
	if !res.IsError || !strings.Contains(res.Error.Message, `does not match its output schema: $: missing required field "count"`) {
		t.Errorf("output schema: %+v", res.Error)
	}
	if res, _ := run.Call(ctx, "typed_out", json.RawMessage(`{"count":1}`), nil); res.IsError {
		t.Errorf("output matching its schema: %+v", res.Error)
	}
}

// Deferred tools are hidden until activated; calling one activates it in
// the run, and only in the run.
func TestDeferredToolsActivateOnFirstUse(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	ctx := context.Background()
	run := newRun(t, reg, registry.RunContext{Tenant: "a"}, nil)
	if got := names(run.Tools()); got != "again,echo_args,typed_out" {
		t.Fatalf("visible catalog = %s", got)
	}
	if got := names(run.Deferred()); got != "deferred_echo" {
		t.Fatalf("deferred = %s", got)
	}
	res, err := run.Call(ctx, "deferred_echo", json.RawMessage(`{"a":1}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("first use: %+v, %v", res, err)
	}
	if got := names(run.Tools()); got != "again,deferred_echo,echo_args,typed_out" {
		t.Errorf("after activation the catalog = %s", got)
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 1 || got[0].Fields["tool_name"] != "deferred_echo" ||
		got[0].Fields["activation_scope"] != "run" || got[0].Fields["source"] != "model" {
		t.Errorf("activation events = %+v", got)
	}
	other := newRun(t, reg, registry.RunContext{Tenant: "a"}, nil)
	if other.Visible("deferred_echo") {
		t.Error("an activation in one run reached another")
	}
	// A hidden tool is listed nowhere but callable by its name.
	if strings.Contains(names(run.Tools())+names(run.Deferred()), "hidden") {
		t.Error("a hidden tool is listed")
	}
	if res, err := run.Call(ctx, "hidden_echo", nil, nil); err != nil || res.IsError {
		t.Errorf("hidden tool by name: %+v, %v", res, err)
	}
}

// Session activation persists within its session and never reaches
// another session or tenant; it needs a session id.
func TestSessionActivation(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{ToolSearch: registry.ToolSearchConfig{ActivationScope: registry.ScopeSession}})
	ctx := context.Background()
	if _, err := reg.NewRun(registry.RunContext{Tenant: "a"}, nil); !errors.Is(err, registry.ErrBadConfig) {
		t.Fatalf("session activation without a session id: %v", err)
	}
	s1 := newRun(t, reg, registry.RunContext{Tenant: "a", Session: "s1"}, nil)
	if _, err := s1.Call(ctx, "deferred_echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !newRun(t, reg, registry.RunContext{Tenant: "a", Session: "s1"}, nil).Visible("deferred_echo") {
		t.Error("a later run of the same session does not see the activation")
	}
	for _, rc := range []registry.RunContext{{Tenant: "a", Session: "s2"}, {Tenant: "b", Session: "s1"}} {
		if newRun(t, reg, rc, nil).Visible("deferred_echo") {
			t.Errorf("the activation reached %+v", rc)
		}
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 1 || got[0].Fields["activation_scope"] != "session" {
		t.Errorf("activation events = %+v", got)
	}
}

// What the run's policy hides is not listed, not activated and not
// executed, and calling it gets exactly the error a nonexistent tool gets.
func TestPolicyHiddenToolsDoNotExist(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	policy := registry.VisibilityFunc(func(rc registry.RunContext, tool *registry.Tool) bool {
		return !strings.Contains(tool.Name, "echo")
	})
	run := newRun(t, reg, registry.RunContext{}, &registry.RunOptions{Policy: policy})
	if got := names(run.Tools()) + "|" + names(run.Deferred()); got != "again,typed_out|" {
		t.Errorf("catalog under the policy = %s", got)
	}
	ctx := context.Background()
	for _, name := range []string{"echo_args", "deferred_echo", "hidden_echo"} {
		_, err := run.Call(ctx, name, nil, nil)
		_, nerr := run.Call(ctx, strings.Repeat("x", len(name)), nil, nil)
		if !errors.Is(err, registry.ErrToolNotFound) || strings.ReplaceAll(err.Error(), name, "N") != strings.ReplaceAll(nerr.Error(), strings.Repeat("x", len(name)), "N") {
			t.Errorf("%s: err %v; a nonexistent tool gets %v", name, err, nerr)
		}
		if run.Reachable(name) || run.Findable(name) {
			t.Errorf("%s is reachable or findable", name)
		}
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 0 {
		t.Errorf("a hidden tool was activated: %+v", got)
	}
	// The init-time ToolPolicy removes tools from the registry itself.
	reg2, _ := newRegistry(t, registry.Options{Policy: registry.ToolPolicy{Deny: []string{"*echo*"}}})
	if got := names(reg2.Tools()); got != "again,typed_out" {
		t.Errorf("registry under the tool policy = %s", got)
	}
}

// A guest's tool_call goes through the run; a cycle ends at the depth
// limit with a clear error, never a hang or a stack overflow.
func TestToolCallCycleEndsAtTheDepthLimit(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{})
	run := newRun(t, reg, registry.RunContext{}, nil)
	res, err := run.Call(context.Background(), "again", nil, nil)
	if err != nil || res.IsError {
		t.Fatalf("again: %+v, %v", res, err)
	}
	if !strings.Contains(string(res.Output), string(abi.CodeDepthExceeded)) {
		t.Errorf("the cycle's innermost result does not report the depth limit: %.300s", res.Output)
	}
	calls := ev.named(registry.EventToolCall)
	if len(calls) != host.DefaultMaxToolDepth+1 {
		t.Errorf("%d calls reported, want %d (the model's and %d nested)", len(calls), host.DefaultMaxToolDepth+1, host.DefaultMaxToolDepth)
	}
	for _, c := range calls {
		if d := c.Call.Depth; d < 0 || d > host.DefaultMaxToolDepth {
			t.Errorf("call at depth %d", d)
		}
	}
}

// Many runs at once, each activating and calling, share the registry
// safely.
func TestConcurrentRuns(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{ToolSearch: registry.ToolSearchConfig{ActivationScope: registry.ScopeSession}})
	ctx := context.Background()
	var wg sync.WaitGroup
	const runs, calls = 64, 4
	// Room for every failure, so that a broken registry fails the test
	// rather than blocking senders and with them wg.Wait.
	errs := make(chan error, runs*calls)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := reg.NewRun(registry.RunContext{Tenant: "t", Session: fmt.Sprint(i % 8)}, nil)
			if err != nil {
				errs <- err
				return
			}
			for j := range calls {
				name := []string{"echo_args", "deferred_echo"}[j%2]
				res, err := run.Call(ctx, name, json.RawMessage(fmt.Sprintf(`{"text":"r%d-%d"}`, i, j)), nil)
				if err != nil || res.IsError || !strings.Contains(string(res.Output), fmt.Sprintf("r%d-%d", i, j)) {
					errs <- fmt.Errorf("run %d call %d: %+v, %v", i, j, res, err)
				}
				_ = run.Tools()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
