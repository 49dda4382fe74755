package registry

import (
	"context"
	"fmt"
	"sync"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// Activation scopes (ToolSearchConfig.ActivationScope).
const (
	// ScopeRun keeps activations on the run: no run changes another.
	ScopeRun = "run"
	// ScopeSession keeps them for the run's session: later runs of the
	// same tenant and session see the tools activated before.
	ScopeSession = "session"
)

func (c ToolSearchConfig) defaultLoading(k Kind) string {
	switch {
	case c.DefaultLoading != "":
		return c.DefaultLoading
	case k == KindBuiltin:
		return packs.LoadingAlways
	}
	return packs.LoadingDeferred
}

// RunContext identifies who a run serves.
type RunContext struct {
	Tenant   string `json:"tenant,omitempty"`
	Project  string `json:"project,omitempty"`
	Session  string `json:"session,omitempty"`
	User     string `json:"user,omitempty"`
	ChatType string `json:"chat_type,omitempty"`
}

// VisibilityPolicy is the run-time policy: it decides which tools of the
// registry a run may see or activate. What it refuses is neither listed,
// found by search, activated nor executed in the run. Allowed must be
// safe for concurrent use, and give the same answer for a tool and a run
// context for as long as the registry is used: tool search ranks with the
// statistics of the tools a policy allows, worked out once per policy
// (when it is a pointer) and run context.
type VisibilityPolicy interface {
	Allowed(rc RunContext, t *Tool) bool
}

// VisibilityFunc adapts a function to VisibilityPolicy.
type VisibilityFunc func(rc RunContext, t *Tool) bool

// Allowed calls f.
func (f VisibilityFunc) Allowed(rc RunContext, t *Tool) bool { return f(rc, t) }

// RunOptions adjust one run.
type RunOptions struct {
	// Policy decides what the run may see; nil allows every tool.
	Policy VisibilityPolicy
	// ActivationScope overrides the catalog's activation scope for this
	// run: ScopeRun, ScopeSession, or "" for the catalog's.
	ActivationScope string
	// OnActivate, when set, is called after a deferred tool became visible
	// in the run (or its session), with the tool's name: a server tells
	// its client the tool list changed.
	OnActivate func(name string)
	// Grants narrow what the run's Wasm tools run with, by pack name (a
	// tenant's [tenants.<id>.grants.<pack>] sections): a tool of a pack
	// listed here runs with its effective grant cut down to the section
	// (see NarrowGrant). Packs not listed keep their effective grant.
	Grants map[string]packs.PackGrant
	// Services answers the capability_call of the run's Wasm tools (and
	// of the tools they call); nil leaves them to the registry's providers
	// (Options.Services), and with none either each is answered with an
	// error. The host asks it only for a service the calling tool's grant
	// allows.
	Services host.ServiceProvider
	// CountFuel counts the fuel of the run's Wasm calls that have no fuel
	// limit, for accounting (a tenant's fuel quota); without it such calls
	// report none (host.CallOptions.CountFuel).
	CountFuel bool
}

// Run is one request's or session's view of the registry: its visible
// catalog (tools loaded always, those matching the always-loaded patterns
// and those activated in the run or its session) and its calls. A Run is
// safe for concurrent use; NewRun copies nothing of the catalog.
type Run struct {
	reg        *Registry
	rc         RunContext
	policy     VisibilityPolicy
	act        *activations
	scope      string
	onActivate func(string)
	grants     map[string]packs.PackGrant
	narrowed   sync.Map // *Tool → host.Grant, for tools of packs in grants
	services   host.ServiceProvider
	countFuel  bool
	// view is the run's own index view for tool_search, made once, when
	// its policy cannot be shared (toolView).
	ownView sync.Once
	view    *index.ToolView
}

// activations are the tools activated in a run or a session.
type activations struct {
	mu    sync.RWMutex
	names map[string]bool
}

func (a *activations) has(name string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.names[name]
}

// add records name and reports whether it was new.
func (a *activations) add(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.names[name] {
		return false
	}
	if a.names == nil {
		a.names = map[string]bool{}
	}
	a.names[name] = true
	return true
}

// sessions holds the activations of each session, by tenant and session.
type sessions struct {
	mu sync.Mutex
	m  map[[2]string]*activations
}

func (s *sessions) get(tenant, session string) *activations {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[[2]string]*activations{}
	}
	key := [2]string{tenant, session}
	a, ok := s.m[key]
	if !ok {
		a = &activations{}
		s.m[key] = a
	}
	return a
}

// NewRun returns a run for rc. With session activation, rc.Session is
// required (ErrBadConfig otherwise): activations then persist across the
// runs of that tenant's session and never reach another session.
func (r *Registry) NewRun(rc RunContext, opts *RunOptions) (*Run, error) {
	run := &Run{reg: r, rc: rc, policy: allowAll{}, scope: r.opts.ToolSearch.ActivationScope}
	if opts != nil {
		if opts.Policy != nil {
			run.policy = opts.Policy
		}
		switch opts.ActivationScope {
		case "":
		case ScopeRun, ScopeSession:
			run.scope = opts.ActivationScope
		default:
			return nil, fmt.Errorf("%w: activation scope %q, want %q or %q", ErrBadConfig, opts.ActivationScope, ScopeRun, ScopeSession)
		}
		run.onActivate = opts.OnActivate
		run.grants = opts.Grants
		run.services = opts.Services
		run.countFuel = opts.CountFuel
	}
	if run.services == nil {
		run.services = r.defaultServices(run)
	}
	if run.scope == "" {
		run.scope = ScopeRun
	}
	if run.scope == ScopeSession {
		if rc.Session == "" {
			return nil, fmt.Errorf("%w: activation_scope is %q but the run has no session id", ErrBadConfig, ScopeSession)
		}
		run.act = r.sessions.get(rc.Tenant, rc.Session)
	} else {
		run.act = &activations{}
	}
	return run, nil
}

// EndSession forgets the activations of a tenant's session: a server
// calls it when the session ends, so that sessions do not accumulate. A
// later run of the same session starts with nothing activated.
func (r *Registry) EndSession(tenant, session string) {
	r.sessions.mu.Lock()
	defer r.sessions.mu.Unlock()
	delete(r.sessions.m, [2]string{tenant, session})
}

type allowAll struct{}

func (allowAll) Allowed(RunContext, *Tool) bool { return true }

// Context returns the run's context.
func (run *Run) Context() RunContext { return run.rc }

// Registry returns the registry the run views.
func (run *Run) Registry() *Registry { return run.reg }

// allowed reports whether the run's policy lets it see t.
func (run *Run) allowed(t *Tool) bool { return run.policy.Allowed(run.rc, t) }

// visible reports whether t is in the run's catalog now: allowed, not
// hidden, and loaded always, matching an always-loaded pattern, or
// activated.
func (run *Run) visible(t *Tool) bool {
	if t.Hidden || !run.allowed(t) {
		return false
	}
	return run.loaded(t)
}

// loaded reports whether t is loaded without activation, or activated.
// Only packs.LoadingAlways loads a tool: an empty mode is deferred, as it
// is in a manifest and in the index.
func (run *Run) loaded(t *Tool) bool {
	if t.Loading == packs.LoadingAlways {
		return true
	}
	for _, g := range run.reg.always {
		if g.Match(t.Name) {
			return true
		}
	}
	return run.act.has(t.Name)
}

// Tools returns the run's visible catalog, sorted by name: what a model
// is shown.
func (run *Run) Tools() []*Tool {
	var out []*Tool
	for _, t := range run.reg.sorted {
		if run.visible(t) {
			out = append(out, t)
		}
	}
	return out
}

// Deferred returns the tools the run may still activate, sorted by name:
// allowed, not hidden, deferred and not yet activated. Renderings that
// support deferred loading list them; tool_search finds them.
func (run *Run) Deferred() []*Tool {
	var out []*Tool
	for _, t := range run.reg.sorted {
		if !t.Hidden && run.allowed(t) && !run.loaded(t) {
			out = append(out, t)
		}
	}
	return out
}

// Visible reports whether the tool called name is in the run's catalog.
func (run *Run) Visible(name string) bool {
	t, ok := run.reg.lookup(name)
	return ok && run.visible(t)
}

// Reachable reports whether a model of this run may call name: it is
// visible, or deferred and activatable, or hidden but allowed (a hidden
// tool is left out of listings and search, and callable by its name).
// What a search may show is Findable.
func (run *Run) Reachable(name string) bool {
	t, ok := run.reg.lookup(name)
	return ok && run.allowed(t)
}

// Findable reports whether tool search may show name to this run: in the
// registry, allowed, and not hidden.
func (run *Run) Findable(name string) bool {
	t, ok := run.reg.lookup(name)
	return ok && !t.Hidden && run.allowed(t)
}

// Activate makes a deferred tool visible in the run (or its session). It
// returns ErrToolNotFound for a tool the run cannot reach.
func (run *Run) Activate(ctx context.Context, name, reason string) error {
	t, ok := run.reg.lookup(name)
	if !ok || !run.allowed(t) {
		run.reg.emit(ctx, run.rc, EventToolActivationDenied, map[string]any{"tool_name": name, "reason": "not found"})
		return fmt.Errorf("%w: %q", ErrToolNotFound, name)
	}
	run.activate(ctx, t, "embedder", reason)
	return nil
}

// activate records t as activated and reports the event once.
func (run *Run) activate(ctx context.Context, t *Tool, source, reason string) {
	if run.loaded(t) {
		return
	}
	if run.act.add(t.Name) {
		run.reg.emit(ctx, run.rc, EventToolActivated, map[string]any{
			"tool_name": t.Name, "activation_scope": run.scope, "source": source, "reason": reason,
		})
		if run.onActivate != nil {
			run.onActivate(t.Name)
		}
	}
}

// grant is what t runs with in the run: its effective grant, narrowed by
// the run's grant of its pack when there is one.
func (run *Run) grant(t *Tool, m *packs.Module) host.Grant {
	pg, ok := run.grants[t.Pack]
	if !ok {
		return t.Effective
	}
	if g, ok := run.narrowed.Load(t); ok {
		return g.(host.Grant)
	}
	g := NarrowGrant(t.Effective, pg, m)
	run.narrowed.Store(t, g)
	return g
}

// NarrowGrant cuts a tool's effective grant down to a narrower section
// of the same shape as [packs.<name>]: mounts, hosts, tools and services
// to those the section also names (host.Intersect); private network only
// if both allow it; environment variables to the names the section lists,
// with the effective grant's values; each limit to the lower of the two;
// process isolation if either asks for it. Config values stay the
// effective grant's. Nothing the effective grant lacks can be added.
func NarrowGrant(eff host.Grant, pg packs.PackGrant, m *packs.Module) host.Grant {
	by := packGrant(pg, m)
	g := host.Intersect(eff, by)
	g.AllowPrivateNetwork = eff.AllowPrivateNetwork && by.AllowPrivateNetwork
	g.Env = nil
	for name := range pg.Env {
		if v, ok := eff.Env[name]; ok {
			if g.Env == nil {
				g.Env = map[string]string{}
			}
			g.Env[name] = v
		}
	}
	g.Config = eff.Config
	g.Limits = eff.Limits.Cap(by.Limits)
	g.Isolation = eff.Isolation
	if by.Isolation == host.IsolationProcess {
		g.Isolation = host.IsolationProcess
	}
	return g
}
