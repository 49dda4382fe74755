package registry_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

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
