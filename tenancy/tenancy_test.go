package tenancy_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

// New refuses tenants that would let a pack's tools or skills reach a
// tenant that does not own them, or that no run could be given.
func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		name    string
		shared  []string
		tenants []tenancy.Tenant
	}{
		{"a pack of two tenants", nil, []tenancy.Tenant{{ID: "a", Packs: []string{"p"}}, {ID: "b", Packs: []string{"p"}}}},
		{"a pack owned and shared", []string{"p"}, []tenancy.Tenant{{ID: "a", Packs: []string{"p"}}}},
		{"no id", nil, []tenancy.Tenant{{}}},
		{"an id that is not one", nil, []tenancy.Tenant{{ID: "A b"}}},
		{"an id twice", nil, []tenancy.Tenant{{ID: "a"}, {ID: "a"}}},
		{"a tools glob that does not compile", nil, []tenancy.Tenant{{ID: "a", Tools: []string{"[x"}}}},
		{"a deny_tools glob that does not compile", nil, []tenancy.Tenant{{ID: "a", DenyTools: []string{"[x"}}}},
		{"an unknown activation scope", nil, []tenancy.Tenant{{ID: "a", ActivationScope: "forever"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if s, err := tenancy.New(c.shared, c.tenants...); !errors.Is(err, tenancy.ErrBadTenants) || s != nil {
				t.Errorf("New = %v, %v; want ErrBadTenants", s, err)
			}
		})
	}
	// The control: the same tenants, apart.
	if _, err := tenancy.New([]string{"q"}, tenancy.Tenant{ID: "a", Packs: []string{"p", "p"}, Tools: []string{"x*"}, ActivationScope: registry.ScopeSession},
		tenancy.Tenant{ID: "b-2", Packs: []string{"r"}}); err != nil {
		t.Errorf("tenants apart: %v", err)
	}
}

// Owner is the one rule of whose a pack is; Allows follows it.
func TestOwner(t *testing.T) {
	a := tenancy.Tenant{ID: "a", Packs: []string{"alpha"}}
	b := tenancy.Tenant{ID: "b", Packs: []string{"beta"}}
	sharing, err := tenancy.New([]string{"common"}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	open, err := tenancy.New(nil, a, b)
	if err != nil {
		t.Fatal(err)
	}
	none, err := tenancy.New([]string{"common"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  *tenancy.Set
		pack string
		want tenancy.Owner
	}{
		{sharing, "alpha", tenancy.OwnedBy("a")},
		{sharing, "beta", tenancy.OwnedBy("b")},
		{sharing, "common", tenancy.Everyone},
		{sharing, "other", tenancy.NoOne},
		{sharing, "", tenancy.Everyone},
		{open, "alpha", tenancy.OwnedBy("a")},
		{open, "other", tenancy.Everyone},
		{none, "other", tenancy.Everyone},
		{nil, "alpha", tenancy.Everyone},
	} {
		if got := c.set.Owner(c.pack); got != c.want {
			t.Errorf("%d tenants, shared %v: Owner(%q) = %v, want %v", c.set.Len(), c.set.Shared(), c.pack, got, c.want)
		}
	}
	if id, ok := sharing.Owner("alpha").Tenant(); id != "a" || !ok {
		t.Errorf("Owner(alpha).Tenant() = %q, %v", id, ok)
	}
	for _, o := range []tenancy.Owner{tenancy.Everyone, tenancy.NoOne} {
		if _, ok := o.Tenant(); ok {
			t.Errorf("%v has a tenant", o)
		}
	}
	if tenancy.NoOne.Allows("a") || !tenancy.Everyone.Allows("a") || !tenancy.OwnedBy("a").Allows("a") || tenancy.OwnedBy("a").Allows("b") {
		t.Error("Owner.Allows does not follow the owner")
	}
}

// A tenant sees the tools of its own packs, the shared packs' and those
// of no pack, as its globs allow; never another tenant's, nor a pack no
// tenant may use.
func TestAllowed(t *testing.T) {
	s, err := tenancy.New([]string{"common"},
		tenancy.Tenant{ID: "a", Packs: []string{"alpha"}, DenyTools: []string{"*_admin"}},
		tenancy.Tenant{ID: "b", Packs: []string{"beta"}, Tools: []string{"beta_*", "tool_search"}})
	if err != nil {
		t.Fatal(err)
	}
	tools := []*registry.Tool{
		{Pack: "alpha", ToolSpec: &packs.ToolSpec{Name: "alpha_go"}}, {Pack: "alpha", ToolSpec: &packs.ToolSpec{Name: "alpha_admin"}}, {Pack: "beta", ToolSpec: &packs.ToolSpec{Name: "beta_go"}},
		{Pack: "common", ToolSpec: &packs.ToolSpec{Name: "common_go"}}, {Pack: "other", ToolSpec: &packs.ToolSpec{Name: "other_go"}}, {ToolSpec: &packs.ToolSpec{Name: "tool_search"}},
	}
	sees := func(id string) []string {
		var out []string
		tn := s.Tenant(id)
		for _, tool := range tools {
			if tn.Allowed(tn.RunContext(""), tool) {
				out = append(out, tool.Name)
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{"alpha_go", "common_go", "tool_search"}, sees("a")); diff != "" {
		t.Errorf("tenant a sees (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"beta_go", "tool_search"}, sees("b")); diff != "" {
		t.Errorf("tenant b sees (-want +got):\n%s", diff)
	}
	if s.Tenant("c") != nil {
		t.Error("a tenant that is not configured")
	}
}

// A Set keeps its own copies: changing what was given to New afterwards
// gives no tenant another's pack, nor a denied tool.
func TestNewCopies(t *testing.T) {
	a := tenancy.Tenant{ID: "a", Packs: []string{"alpha"}, DenyTools: []string{"secret_*"}, Grants: map[string]packs.PackGrant{"alpha": {}}}
	s, err := tenancy.New(nil, a, tenancy.Tenant{ID: "b", Packs: []string{"beta"}})
	if err != nil {
		t.Fatal(err)
	}
	a.Packs[0], a.DenyTools[0] = "beta", "other"
	a.Grants["beta"] = packs.PackGrant{}
	tn := s.Tenant("a")
	if tn.Allows("beta", "beta_go") || tn.Allows("alpha", "secret_x") || len(tn.Grants) != 1 || s.Owner("beta") != tenancy.OwnedBy("b") ||
		tn.Packs[0] != "alpha" || tn.DenyTools[0] != "secret_*" {
		t.Error("a change to New's arguments reached the Set")
	}
}

// A Set lists its tenants by id, whatever their order; the nil Set has
// none and owns nothing.
func TestSetTenants(t *testing.T) {
	s, err := tenancy.New(nil, tenancy.Tenant{ID: "b"}, tenancy.Tenant{ID: "a"}, tenancy.Tenant{ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tn := range s.Tenants() {
		ids = append(ids, tn.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("Tenants (-want +got):\n%s", diff)
	}
	var none *tenancy.Set
	if none.Tenant("a") != nil || none.Len() != 0 || none.Tenants() != nil || none.Shared() != nil || none.Owner("p") != tenancy.Everyone {
		t.Error("the nil Set is not empty")
	}
}

// A tenant's runs take its policy, activation scope, grants and fuel
// counting from it, and search its index scope.
func TestRunOptions(t *testing.T) {
	grants := map[string]packs.PackGrant{"alpha": {Enabled: true}}
	s, err := tenancy.New(nil, tenancy.Tenant{ID: "a", ActivationScope: registry.ScopeSession, Grants: grants,
		Quotas: tenancy.Quotas{FuelPerMinute: 1000}}, tenancy.Tenant{ID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Tenant("a"), s.Tenant("b")
	o := a.RunOptions()
	if o.Policy != registry.VisibilityPolicy(a) || o.ActivationScope != registry.ScopeSession || !o.CountFuel || len(o.Grants) != 1 {
		t.Errorf("a's run options: %+v", o)
	}
	if o := b.RunOptions(); o.CountFuel || o.ActivationScope != "" || o.Grants != nil {
		t.Errorf("b's run options: %+v", o)
	}
	if got, want := a.Scope(), (index.Scope{Mode: packs.ScopeTenant, TenantID: "a"}); got != want {
		t.Errorf("a's scope = %+v, want %+v", got, want)
	}
	if got, want := tenancy.ScopeOf("a", "p"), (index.Scope{Mode: packs.ScopeProject, TenantID: "a", ProjectID: "p"}); got != want {
		t.Errorf("a's project scope = %+v, want %+v", got, want)
	}
	if rc := a.RunContext("s1"); rc.Tenant != "a" || rc.Session != "s1" {
		t.Errorf("a's run context: %+v", rc)
	}
}
