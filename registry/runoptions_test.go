package registry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// A run may choose its own activation scope, is told of each activation
// once, and a session the server ended starts afresh.
func TestRunOptionsScopeNotifyAndEndSession(t *testing.T) {
	reg, ev := newRegistry(t, registry.Options{}) // the catalog's scope is "run"
	ctx := context.Background()
	if _, err := reg.NewRun(registry.RunContext{Tenant: "a"}, &registry.RunOptions{ActivationScope: registry.ScopeSession}); !errors.Is(err, registry.ErrBadConfig) {
		t.Fatalf("session scope without a session id: %v", err)
	}
	if _, err := reg.NewRun(registry.RunContext{Tenant: "a", Session: "s"}, &registry.RunOptions{ActivationScope: "forever"}); !errors.Is(err, registry.ErrBadConfig) {
		t.Fatalf("an unknown scope: %v", err)
	}
	var mu sync.Mutex
	var told []string
	opts := &registry.RunOptions{ActivationScope: registry.ScopeSession, OnActivate: func(name string) {
		mu.Lock()
		told = append(told, name)
		mu.Unlock()
	}}
	s1 := newRun(t, reg, registry.RunContext{Tenant: "a", Session: "s1"}, opts)
	for range 3 {
		if res, err := s1.Call(ctx, "deferred_echo", nil, nil); err != nil || res.IsError {
			t.Fatalf("deferred_echo: %+v, %v", res, err)
		}
	}
	if !slices.Equal(told, []string{"deferred_echo"}) {
		t.Errorf("OnActivate was told %q, want deferred_echo once", told)
	}
	if got := ev.named(registry.EventToolActivated); len(got) != 1 || got[0].Fields["activation_scope"] != registry.ScopeSession {
		t.Errorf("activation events = %+v", got)
	}
	later := newRun(t, reg, registry.RunContext{Tenant: "a", Session: "s1"}, &registry.RunOptions{ActivationScope: registry.ScopeSession})
	if !later.Visible("deferred_echo") {
		t.Error("a later run of the session does not see the activation")
	}
	// A run of the same session at run scope keeps its own activations.
	if newRun(t, reg, registry.RunContext{Tenant: "a", Session: "s1"}, nil).Visible("deferred_echo") {
		t.Error("a run-scoped run sees the session's activation")
	}
	reg.EndSession("a", "s1")
	if newRun(t, reg, registry.RunContext{Tenant: "a", Session: "s1"}, &registry.RunOptions{ActivationScope: registry.ScopeSession}).Visible("deferred_echo") {
		t.Error("an ended session's activation survived")
	}
}

// A run's grant of a pack narrows what its tools run with: here it grants
// no tools, so a tool that calls itself is refused the nested call
// instead of recursing to the depth limit; a run without it recurses.
func TestRunGrantsNarrow(t *testing.T) {
	reg, _ := newRegistry(t, registry.Options{})
	ctx := context.Background()
	narrow := newRun(t, reg, registry.RunContext{Tenant: "t"}, &registry.RunOptions{Grants: map[string]packs.PackGrant{"t": {}}})
	res, err := narrow.Call(ctx, "again", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s %+v", res.Output, res.Error); strings.Contains(got, string(abi.CodeDepthExceeded)) || !strings.Contains(got, "again") {
		t.Errorf("narrowed run: %s; want the nested call of again refused", got)
	}
	wide := newRun(t, reg, registry.RunContext{Tenant: "t"}, nil)
	res, err = wide.Call(ctx, "again", nil, nil)
	if err != nil || !strings.Contains(string(res.Output), string(abi.CodeDepthExceeded)) {
		t.Errorf("run without a narrowing grant: %+v, %v", res, err)
	}
}

// NarrowGrant keeps only what both sides allow and never adds.
func TestNarrowGrant(t *testing.T) {
	eff := host.Grant{
		AllowedHosts: []string{"a.example", "*.b.example"},
		Env:          map[string]string{"TOKEN": "s3cret", "REGION": "eu"},
		Config:       map[string]string{"k": "v"},
		Capabilities: []string{"mail.send", "kv.get"},
		Limits:       host.Limits{MaxFuel: 1000, Timeout: 5 * time.Second},
		Mounts:       []host.Mount{{HostPath: "/srv/data", GuestPath: "/data"}},
	}
	pg := packs.PackGrant{
		AllowedHosts:        []string{"x.b.example", "c.example"},
		AllowPrivateNetwork: true,
		Env:                 map[string]packs.Secret{"REGION": packs.NewSecret("us"), "EXTRA": packs.NewSecret("x")},
		Services:            []string{"kv.get", "pay.charge"},
		Limits:              host.Limits{MaxFuel: 500},
		Isolation:           "process",
	}
	g := registry.NarrowGrant(eff, pg, &packs.Module{})
	if !slices.Equal(g.AllowedHosts, []string{"x.b.example"}) || g.AllowPrivateNetwork {
		t.Errorf("network: %v private=%v", g.AllowedHosts, g.AllowPrivateNetwork)
	}
	if len(g.Env) != 1 || g.Env["REGION"] != "eu" {
		t.Errorf("env = %v, want REGION with the effective value only", g.Env)
	}
	if !slices.Equal(g.Capabilities, []string{"kv.get"}) || len(g.Mounts) != 0 || g.Config["k"] != "v" {
		t.Errorf("services %v mounts %v config %v", g.Capabilities, g.Mounts, g.Config)
	}
	if g.Limits.MaxFuel != 500 || g.Limits.Timeout != 5*time.Second || g.Isolation != host.IsolationProcess {
		t.Errorf("limits %+v isolation %q", g.Limits, g.Isolation)
	}
}
