package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// capsPack has capability.wasm's exports as tools; its module asks for
// the services it calls when requested is set.
func capsPack(name string, requested bool) string {
	req := ""
	if requested {
		req = "    request:\n      services: [mail.send, ghost.lookup, nodot]\n"
	}
	return `name: ` + name + `
default_loading: always
modules:
  - name: m
    path: m.wasm
` + req + `    tools:
      - name: ` + name + `_send
        export: send
        description: Sends mail through the mail provider.
      - name: ` + name + `_lookup
        export: lookup
        description: Asks a namespace no provider serves.
      - name: ` + name + `_bare
        export: bare
        description: Asks a capability id without a namespace.
`
}

// mailProvider records what it was asked and by which run.
type mailProvider struct {
	mu    sync.Mutex
	calls []string // "tenant id args"
}

func (m *mailProvider) CallService(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	run := registry.RunFrom(ctx)
	if run == nil {
		return nil, errors.New("the provider's context carries no run")
	}
	m.mu.Lock()
	m.calls = append(m.calls, run.Context().Tenant+" "+id+" "+string(args))
	m.mu.Unlock()
	if run.Context().Tenant == "blocked" {
		return nil, &abi.Error{Code: abi.CodePermissionDenied, Message: "no mail for this tenant"}
	}
	return json.RawMessage(`{"sent":true}`), nil
}

func (m *mailProvider) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

var allCaps = []string{"mail.send", "ghost.lookup", "nodot"}

// capsRegistry loads pack c (which requests the services) and pack n
// (which does not), granted by the operator as grants say.
func capsRegistry(t *testing.T, grants map[string]host.Grant, services map[string]host.ServiceProvider) (*registry.Registry, *events) {
	t.Helper()
	ev := &events{}
	reg, err := registry.New(context.Background(),
		catalog(t, writePack(t, capsPack("c", true), "wat/capability.wasm"), writePack(t, capsPack("n", false), "wat/capability.wasm")),
		registry.Options{Host: newHost(t), Grants: grants, Services: services, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	return reg, ev
}

// capResult calls tool in run and decodes the abi.ToolResult the guest
// got back from capability_call.
func capResult(t *testing.T, run *registry.Run, tool, args string) abi.ToolResult {
	t.Helper()
	res, err := run.Call(context.Background(), tool, json.RawMessage(args), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s failed itself: %+v", tool, res.Error)
	}
	var tr abi.ToolResult
	if err := json.Unmarshal(res.Output, &tr); err != nil {
		t.Fatalf("%s output %s: %v", tool, res.Output, err)
	}
	return tr
}

func wantRefused(t *testing.T, tr abi.ToolResult, code abi.Code, what string) {
	t.Helper()
	if !tr.IsError || tr.Error == nil || tr.Error.Code != code {
		t.Errorf("%s: %+v, want an error with code %s", what, tr, code)
	}
}

func TestCapabilityReachesProviderOnlyWhenEverySideAllowsIt(t *testing.T) {
	mail := &mailProvider{}
	services := map[string]host.ServiceProvider{"mail": mail}
	granted := map[string]host.Grant{"c": {Capabilities: allCaps}, "n": {Capabilities: allCaps}}
	reg, ev := capsRegistry(t, granted, services)

	// Requested, granted by the operator, the tenant's grant allows it.
	run := newRun(t, reg, registry.RunContext{Tenant: "acme"}, &registry.RunOptions{
		Grants: map[string]packs.PackGrant{"c": {Services: []string{"mail.send"}}}})
	tr := capResult(t, run, "c_send", `{"to":"ops@example.com"}`)
	if tr.IsError || string(tr.Output) != `{"sent":true}` {
		t.Fatalf("c_send: %+v, want the provider's result", tr)
	}
	if got := mail.seen(); len(got) != 1 || got[0] != `acme mail.send {"to":"ops@example.com"}` {
		t.Errorf("provider saw %q, want the tenant, id and arguments", got)
	}
	if evs := ev.named(registry.EventCapabilityCall); len(evs) != 1 || evs[0].Fields["capability"] != "mail.send" ||
		evs[0].Fields["outcome"] != "ok" || evs[0].Run.Tenant != "acme" {
		t.Errorf("capability_call events: %+v", evs)
	}

	// The manifest does not request it: refused by the host, whatever the
	// operator grants.
	wantRefused(t, capResult(t, run, "n_send", `{}`), abi.CodePermissionDenied, "not requested")

	// The tenant's grant narrows it away.
	narrowed := newRun(t, reg, registry.RunContext{Tenant: "acme"}, &registry.RunOptions{
		Grants: map[string]packs.PackGrant{"c": {Services: []string{"ghost.lookup"}}}})
	wantRefused(t, capResult(t, narrowed, "c_send", `{}`), abi.CodePermissionDenied, "narrowed by the tenant")

	// The operator does not grant it.
	ungranted, _ := capsRegistry(t, map[string]host.Grant{"c": {Capabilities: []string{"ghost.lookup"}}}, services)
	wantRefused(t, capResult(t, newRun(t, ungranted, registry.RunContext{Tenant: "acme"}, nil), "c_send", `{}`),
		abi.CodePermissionDenied, "not granted by the operator")

	if got := mail.seen(); len(got) != 1 {
		t.Errorf("the provider was asked %d times, want once: %q", len(got), got)
	}

	// The provider refuses further, for a tenant.
	blocked := newRun(t, reg, registry.RunContext{Tenant: "blocked"}, nil)
	tr = capResult(t, blocked, "c_send", `{}`)
	if wantRefused(t, tr, abi.CodePermissionDenied, "refused by the provider"); tr.Error != nil && tr.Error.Message != "no mail for this tenant" {
		t.Errorf("message %q", tr.Error.Message)
	}
}

func TestCapabilityRouting(t *testing.T) {
	granted := map[string]host.Grant{"c": {Capabilities: allCaps}}
	panicky := host.ServiceProviderFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		panic("provider bug")
	})
	reg, ev := capsRegistry(t, granted, map[string]host.ServiceProvider{"mail": panicky})
	run := newRun(t, reg, registry.RunContext{}, nil)

	tr := capResult(t, run, "c_lookup", `{}`)
	if wantRefused(t, tr, abi.CodeNotFound, "no provider for the namespace"); tr.Error != nil && !strings.Contains(tr.Error.Message, `"ghost"`) {
		t.Errorf("message %q does not name the namespace", tr.Error.Message)
	}
	wantRefused(t, capResult(t, run, "c_bare", `{}`), abi.CodeInvalidInput, "no namespace")
	wantRefused(t, capResult(t, run, "c_send", `{}`), abi.CodeInternal, "a provider that panics")
	if len(ev.named(registry.EventToolPanic)) != 1 {
		t.Error("the provider's panic was not reported")
	}
	// The host keeps serving.
	wantRefused(t, capResult(t, run, "c_lookup", `{}`), abi.CodeNotFound, "after the panic")

	// A run's own services replace the registry's.
	own := host.ServiceProviderFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"the run's"`), nil
	})
	mine := newRun(t, reg, registry.RunContext{}, &registry.RunOptions{Services: own})
	if tr := capResult(t, mine, "c_send", `{}`); tr.IsError || string(tr.Output) != `"the run's"` {
		t.Errorf("with RunOptions.Services: %+v", tr)
	}

	// Without providers the host answers that none is configured.
	none, _ := capsRegistry(t, granted, nil)
	wantRefused(t, capResult(t, newRun(t, none, registry.RunContext{}, nil), "c_send", `{}`), abi.CodeUnavailable, "no providers")
}

func TestBadServices(t *testing.T) {
	ok := host.ServiceProviderFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	for name, s := range map[string]map[string]host.ServiceProvider{
		"dotted":   {"mail.send": ok},
		"empty":    {"": ok},
		"nil":      {"mail": nil},
		"spaced":   {"my mail": ok},
		"one good": {"mail": ok, "bad.ns": ok},
	} {
		_, err := registry.New(context.Background(), nil, registry.Options{Services: s})
		if !errors.Is(err, registry.ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
	reg, err := registry.New(context.Background(), nil, registry.Options{Services: map[string]host.ServiceProvider{"mail": ok, "cal": ok}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reg.Services(), ","); got != "cal,mail" {
		t.Errorf("Services() = %s", got)
	}
}

// A capability_call event is made by every call: the default sink logs it
// at Debug, like a tool call, not at Info.
func TestSlogSinkLogsCapabilityCallsAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		sink := registry.SlogSink{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))}
		sink.Event(context.Background(), registry.Event{Name: registry.EventCapabilityCall, Fields: map[string]any{"capability": "mail.send", "outcome": "ok"}})
		if logged := strings.Contains(buf.String(), `"capability":"mail.send"`); logged != (level == slog.LevelDebug) {
			t.Errorf("at level %v: logged %q", level, buf.String())
		}
	}
}
