// Package tenancy says what a tenant is and whose each pack is: the one
// rule by which an engine keeps a pack's skills in the index, and a server
// shows a pack's tools, to the tenants that may use them.
//
// A Tenant is one tenant's id and what it may use: its own packs, tool
// name globs it may and may not use, the grants its calls run with, its
// quotas and its activation scope. A Set is every tenant of one
// configuration with the packs they share; its Owner of a pack is every
// tenant, one tenant, or no tenant. A Set is immutable and safe for
// concurrent use; so are the Tenants it holds.
package tenancy

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gobwas/glob"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// ErrBadTenants is returned by New for tenants that cannot work together:
// an id that is not one, a pack of two tenants, a pack both owned and
// shared, a tool glob that does not compile, an unknown activation scope.
var ErrBadTenants = errors.New("bad tenant configuration")

// idRE is what a tenant id may be: lowercase letters and digits separated
// by single - or _.
var idRE = regexp.MustCompile(`^[a-z0-9]+([_-][a-z0-9]+)*$`)

// ValidID reports whether id may name a tenant.
func ValidID(id string) bool { return idRE.MatchString(id) }

// Tenant is one tenant: who it is and what it may use. Its fields are
// what a [tenants.<id>] section states; New checks them and returns the
// Tenant a run uses, which must not be changed afterwards.
type Tenant struct {
	// ID names the tenant: lowercase letters and digits separated by
	// single - or _. It is the run's RunContext.Tenant, the tenant's index
	// scope and the group whose guests share the processors fairly.
	ID string `toml:"-"`
	// Packs are the packs the tenant owns: no other tenant sees their
	// tools or skills.
	Packs []string `toml:"packs"`
	// Tools and DenyTools are tool name globs: a tool the tenant may use
	// matches one of Tools (nil: every tool it may see) and none of
	// DenyTools.
	Tools     []string `toml:"tools"`
	DenyTools []string `toml:"deny_tools"`
	// ActivationScope is registry.ScopeRun or registry.ScopeSession; ""
	// keeps the engine's [tool_search] activation_scope.
	ActivationScope string `toml:"activation_scope"`
	// Quotas bound the tenant's use.
	Quotas Quotas `toml:"quotas"`
	// Grants narrow what the operator's [packs.<name>] sections grant, for
	// this tenant's calls, by pack name (registry.NarrowGrant).
	Grants map[string]packs.PackGrant `toml:"grants"`

	set         *Set
	allow, deny []glob.Glob
}

// Quotas are a tenant's limits; a zero field is no limit.
type Quotas struct {
	// ConcurrentCalls caps the tenant's calls in flight at once.
	ConcurrentCalls int `toml:"concurrent_calls"`
	// CallsPerMinute caps the calls started in any minute.
	CallsPerMinute int `toml:"calls_per_minute"`
	// FuelPerMinute caps the instructions the tenant's guests run in a
	// minute (metered calls).
	FuelPerMinute int64 `toml:"fuel_per_minute"`
	// GuestTimePerMinute caps the time the tenant's guests run in a
	// minute.
	GuestTimePerMinute time.Duration `toml:"guest_time_per_minute"`
	// Memory caps the guest memory of the tenant's calls in flight
	// together, in bytes.
	Memory uint64 `toml:"memory"`
}

// Set is the tenants of one configuration and the packs they share. The
// nil *Set has no tenants: every pack is every run's.
type Set struct {
	tenants []*Tenant          // sorted by ID
	byID    map[string]*Tenant // by ID
	owners  map[string]*Tenant // by pack
	shared  map[string]bool    // nil: every pack no tenant owns
}

// New checks tenants and returns their Set. shared are the packs every
// tenant sees beside its own ([server] shared_packs); nil means every pack
// no tenant owns, and an empty list none. A pack belongs to one tenant,
// and cannot be both a tenant's and shared: its tools and skills would
// reach a tenant that does not own them. Every problem is returned,
// joined, each matching ErrBadTenants.
func New(shared []string, tenants ...Tenant) (*Set, error) {
	s := &Set{byID: map[string]*Tenant{}, owners: map[string]*Tenant{}}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrBadTenants}, args...)...))
	}
	for i := range tenants {
		t := tenants[i]
		if !ValidID(t.ID) {
			bad("tenant id %q must be lowercase letters and digits separated by single - or _", t.ID)
			continue
		}
		if _, dup := s.byID[t.ID]; dup {
			bad("tenant %q is defined twice", t.ID)
			continue
		}
		// The Set keeps copies: a caller that changes its slices or maps
		// afterwards changes nothing a run sees.
		t.set = s
		t.Packs, t.Tools, t.DenyTools = slices.Clone(t.Packs), slices.Clone(t.Tools), slices.Clone(t.DenyTools)
		t.Grants = maps.Clone(t.Grants)
		for _, p := range t.Packs {
			if other, ok := s.owners[p]; ok && other.ID != t.ID {
				bad("pack %q is a pack of tenants %q and %q; a pack belongs to one tenant — list it in [server] shared_packs to give it to every tenant", p, other.ID, t.ID)
				continue
			}
			s.owners[p] = &t
		}
		var err error
		if t.allow, err = compile(t.ID, "tools", t.Tools); err != nil {
			errs = append(errs, err)
		}
		if t.deny, err = compile(t.ID, "deny_tools", t.DenyTools); err != nil {
			errs = append(errs, err)
		}
		switch t.ActivationScope {
		case "", registry.ScopeRun, registry.ScopeSession:
		default:
			bad("[tenants.%s] activation_scope %q: want %q or %q", t.ID, t.ActivationScope, registry.ScopeRun, registry.ScopeSession)
		}
		s.byID[t.ID] = &t
		s.tenants = append(s.tenants, &t)
	}
	if shared != nil {
		s.shared = map[string]bool{}
		for _, p := range shared {
			if owner, ok := s.owners[p]; ok {
				bad("pack %q is in [server] shared_packs and a pack of tenant %q; it can be one or the other", p, owner.ID)
			}
			s.shared[p] = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(s.tenants, func(a, b *Tenant) int { return strings.Compare(a.ID, b.ID) })
	return s, nil
}

// compile compiles a tenant's tool globs.
func compile(id, key string, globs []string) ([]glob.Glob, error) {
	var out []glob.Glob
	for _, g := range globs {
		c, err := glob.Compile(g)
		if err != nil {
			return nil, fmt.Errorf("%w: [tenants.%s] %s: %q is not a glob: %v", ErrBadTenants, id, key, g, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Len returns the number of tenants.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tenants)
}

// Tenants returns the tenants, sorted by ID.
func (s *Set) Tenants() []*Tenant {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tenants)
}

// Tenant returns the tenant of id, or nil.
func (s *Set) Tenant(id string) *Tenant {
	if s == nil {
		return nil
	}
	return s.byID[id]
}

// Shared returns the packs every tenant sees beside its own, sorted; nil
// means every pack no tenant owns.
func (s *Set) Shared() []string {
	if s == nil || s.shared == nil {
		return nil
	}
	out := make([]string, 0, len(s.shared))
	for p := range s.shared {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Owner returns whose pack is. The embedder's own tools and skills, which
// have no pack (""), are every tenant's; so is every pack when there are
// no tenants. A pack a tenant lists is that tenant's. With shared packs
// named, a pack neither shared nor owned is no tenant's; without, it is
// every tenant's.
func (s *Set) Owner(pack string) Owner {
	if s == nil || pack == "" || len(s.tenants) == 0 {
		return Everyone
	}
	if t, ok := s.owners[pack]; ok {
		return Owner{id: t.ID}
	}
	if s.shared != nil && !s.shared[pack] {
		return NoOne
	}
	return Everyone
}

// Owner says which tenants may use a pack's tools and skills: every
// tenant (Everyone), one (OwnedBy), or none (NoOne). Owners compare with
// ==, across Sets too.
type Owner struct {
	id   string
	none bool
}

// The owners that are no one tenant.
var (
	// Everyone is the owner of a pack every tenant may use.
	Everyone = Owner{}
	// NoOne is the owner of a pack no tenant may use: its skills are not
	// kept in the index at all.
	NoOne = Owner{none: true}
)

// OwnedBy returns the owner of a pack of the tenant id alone.
func OwnedBy(id string) Owner { return Owner{id: id} }

// Tenant returns the id of the tenant that owns the pack alone, if one
// does.
func (o Owner) Tenant() (id string, ok bool) { return o.id, o.id != "" }

// Allows reports whether the tenant id may use what o owns.
func (o Owner) Allows(id string) bool { return !o.none && (o.id == "" || o.id == id) }

// String names the owner for messages: "every tenant", "tenant \"a\"" or
// "no tenant".
func (o Owner) String() string {
	switch {
	case o.none:
		return "no tenant"
	case o.id != "":
		return fmt.Sprintf("tenant %q", o.id)
	}
	return "every tenant"
}

// Scope is the index scope of the tenant's own skills, and the scope its
// runs search: skills stored at it, and the global ones, are what the
// tenant's runs find.
func (t *Tenant) Scope() index.Scope { return ScopeOf(t.ID, "") }

// ScopeOf is the index scope of a run of tenant id and project (""
// for none): the tenant's scope, or its project's.
func ScopeOf(id, project string) index.Scope {
	if project != "" {
		return index.Scope{Mode: packs.ScopeProject, TenantID: id, ProjectID: project}
	}
	return index.Scope{Mode: packs.ScopeTenant, TenantID: id}
}

// Allowed reports whether a run of the tenant may see tool: a tool of a
// pack it owns, a shared pack's or one of no pack, whose name matches its
// tool globs. It makes *Tenant a registry.VisibilityPolicy; a pointer, so
// that a registry keeps one tool search view per tenant and session.
func (t *Tenant) Allowed(_ registry.RunContext, tool *registry.Tool) bool {
	return t.Allows(tool.Pack, tool.Name)
}

// Allows reports whether the tenant may use the tool name of pack ("" for
// a tool of no pack): the pack must be its own or every tenant's, and the
// name match its tool globs.
func (t *Tenant) Allows(pack, name string) bool {
	if !t.set.Owner(pack).Allows(t.ID) {
		return false
	}
	for _, g := range t.deny {
		if g.Match(name) {
			return false
		}
	}
	if t.Tools == nil {
		return true
	}
	for _, g := range t.allow {
		if g.Match(name) {
			return true
		}
	}
	return false
}

// RunOptions returns the options of a run of the tenant: its policy, its
// activation scope, the grants its calls run with, and fuel counted when
// a fuel quota needs it. The caller may set the other fields.
func (t *Tenant) RunOptions() *registry.RunOptions {
	return &registry.RunOptions{Policy: t, ActivationScope: t.ActivationScope, Grants: t.Grants,
		CountFuel: t.Quotas.FuelPerMinute > 0}
}

// RunContext returns the context of a run of the tenant in session.
func (t *Tenant) RunContext(session string) registry.RunContext {
	return registry.RunContext{Tenant: t.ID, Session: session}
}

var _ registry.VisibilityPolicy = (*Tenant)(nil)
