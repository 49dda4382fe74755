package registry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"sync"

	"github.com/gobwas/glob"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/fastschema"
	"github.com/skillhost/skillhost/packs"
)

// Errors returned by the registry.
var (
	// ErrToolNotFound is returned when a run has no visible or activatable
	// tool of that name. A tool the run's policy hides gets exactly this
	// error, never a hint that it exists.
	ErrToolNotFound = errors.New("registry: tool not found")
	// ErrDuplicateTool is returned by New when two sources declare the
	// same tool name, or when the name one tool is shown to models under
	// (Tool.APIName) is another tool's; the message names both.
	ErrDuplicateTool = errors.New("registry: duplicate tool name")
	// ErrInvalidTool is returned by New for a native tool whose
	// description is unusable (no name, no description, a name no model
	// API can carry even mapped, which also matches packs.ErrToolName, a
	// schema that does not compile, or one MCP clients refuse with no
	// equivalent form they accept, which also matches
	// packs.ErrToolSchema).
	ErrInvalidTool = errors.New("registry: invalid tool")
	// ErrBadConfig is returned for options that cannot work, such as
	// session activation without a session id. It is host.ErrBadConfig,
	// the one configuration sentinel of every layer.
	ErrBadConfig = host.ErrBadConfig
)

// ToolPolicy is the operator's init-time policy: it removes tools from the
// execution registry entirely, so no run can see, find or call them.
// Patterns are globs over tool names ("fs_*", "pack.*"); a tool is kept
// when Allow is empty or one of its patterns matches, and no Deny pattern
// matches.
type ToolPolicy struct {
	Allow []string
	Deny  []string
}

// Options configure a Registry. The zero value of every field is usable
// but Host, which Wasm tools need.
type Options struct {
	// Host runs the Wasm tools. Required when the catalog has packs with
	// modules.
	Host *host.Host
	// Operator is the operator's configuration: per-pack grants, limits
	// and config values. Nil means packs.DefaultConfig().
	Operator *packs.Config
	// GrantFor, when set, is called with the operator's grant of each Wasm
	// module as it is computed, with the module's pack and tool names; when
	// it returns true the grant it returns is the module's operator grant
	// instead, as from the embedder (GrantFromEmbedder). Grants are
	// computed once, as the registry is built: skillhost call adds its
	// grant flags to the called tool's grant this way.
	GrantFor func(pack string, tools []string, operator host.Grant) (host.Grant, bool)
	// Grants are the embedder's grants by pack name; an entry replaces the
	// operator config's section for that pack.
	Grants map[string]host.Grant
	// DefaultLimits are the embedder's default ceilings; their non-zero
	// fields win over the operator config's [limits]. The default timeout
	// they give a Wasm tool bounds every built-in's call too (Builtins).
	DefaultLimits host.Limits
	// Policy removes tools before anything else sees them.
	Policy ToolPolicy
	// Natives are Go tools the embedder registers.
	Natives []Native
	// Builtins are skillhost's own tools (tool_search, skill_get…).
	Builtins []Native
	// ToolSearch configures runs: what is visible, how activation works
	// (the [tool_search] section). With Enabled false every tool is
	// loaded from the start and no tool named tool_search is kept.
	ToolSearch ToolSearchConfig
	// Events receives every event; nil drops them.
	Events Sink
	// MaxResultBytes caps a result shown to the model (default
	// DefaultMaxResultBytes).
	MaxResultBytes int
	// Services are the capability providers by namespace: "mail" answers
	// a guest's capability_call of "mail.send", "mail.list"… A run made
	// without RunOptions.Services routes each call by the id's namespace
	// (services.go); the provider's context carries the run (RunFrom).
	Services map[string]host.ServiceProvider
	// OneCall loads each module, tools' and scripts', for a process that
	// makes one call, as `skillhost call` and `skillhost run-script` do
	// (host.LoadOptions.Once): no warm-up runs and no snapshot is taken.
	OneCall bool
}

// DefaultMaxResultBytes is the default cap of a tool result.
const DefaultMaxResultBytes = 1 << 20

// Registry is the execution registry: every tool the process can run,
// after the ToolPolicy removed what the operator forbids. It is immutable
// once built and safe for concurrent use; runs (NewRun) are views of it.
type Registry struct {
	opts   Options
	grants *grants
	tools  map[string]*Tool
	// mapped holds the tools whose APIName is not their name, by APIName.
	mapped map[string]*Tool
	sorted []*Tool
	always []glob.Glob

	problems []error
	packs    []*packs.Pack

	mu      sync.Mutex
	modules map[*packs.Module]*moduleSlot

	sessions sessions
	views    toolViews
}

// New builds the registry of the tools of cat (its packs' Wasm tools),
// opts.Natives and opts.Builtins. A pack whose config values do not fit
// its tools' config params, or whose module's tools cannot be described,
// is left out and reported by Problems; a duplicate name between two
// sources, or an unusable native tool, is an error.
func New(ctx context.Context, cat *packs.Catalog, opts Options) (*Registry, error) {
	if opts.Operator == nil {
		opts.Operator = packs.DefaultConfig()
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if err := opts.ToolSearch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if !opts.ToolSearch.On() {
		// Switched off: every tool in view, and no search tool.
		opts.ToolSearch.AlwaysLoaded = append(slices.Clip(opts.ToolSearch.AlwaysLoaded), "*")
		opts.Policy.Deny = append(slices.Clip(opts.Policy.Deny), ToolSearchName)
	}
	if err := checkServices(opts.Services); err != nil {
		return nil, err
	}
	r := &Registry{
		opts:    opts,
		tools:   map[string]*Tool{},
		mapped:  map[string]*Tool{},
		modules: map[*packs.Module]*moduleSlot{},
	}
	r.grants = &grants{op: opts.Operator, embedder: opts.Grants, adjust: opts.GrantFor, defaults: opts.DefaultLimits,
		resolve: func(l host.Limits) host.Limits { return l }, isolation: host.IsolationInProcess}
	if opts.Host != nil {
		r.grants.resolve = opts.Host.Config().Resolve
	}
	for _, p := range opts.ToolSearch.AlwaysLoaded {
		g, err := glob.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: always_loaded_patterns: %q: %v", ErrBadConfig, p, err)
		}
		r.always = append(r.always, g)
	}
	policy, err := compilePolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	if cat != nil {
		r.loadPacks(ctx, cat)
	}
	for _, n := range opts.Builtins {
		if err := r.addNative(n, KindBuiltin); err != nil {
			return nil, err
		}
	}
	for _, n := range opts.Natives {
		if err := r.addNative(n, KindNative); err != nil {
			return nil, err
		}
	}
	for name, t := range r.tools {
		if !policy(name) {
			delete(r.tools, name)
			delete(r.mapped, t.APIName)
			continue
		}
		r.sorted = append(r.sorted, t)
	}
	sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].Name < r.sorted[j].Name })
	return r, nil
}

// compilePolicy returns the ToolPolicy as a predicate.
func compilePolicy(p ToolPolicy) (func(string) bool, error) {
	compile := func(what string, pats []string) ([]glob.Glob, error) {
		var gs []glob.Glob
		for _, pat := range pats {
			g, err := glob.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("%w: tool policy %s pattern %q: %v", ErrBadConfig, what, pat, err)
			}
			gs = append(gs, g)
		}
		return gs, nil
	}
	allow, err := compile("allow", p.Allow)
	if err != nil {
		return nil, err
	}
	deny, err := compile("deny", p.Deny)
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		for _, g := range deny {
			if g.Match(name) {
				return false
			}
		}
		if len(allow) == 0 {
			return true
		}
		for _, g := range allow {
			if g.Match(name) {
				return true
			}
		}
		return false
	}, nil
}

// loadPacks registers the Wasm tools of cat, asking a module's describe
// export when its manifest lists none or leaves out what it describes. A
// module packs.CheckModule refuses is a problem, and none of its tools
// load.
func (r *Registry) loadPacks(ctx context.Context, cat *packs.Catalog) {
	bad := map[*packs.Pack]bool{}
	for _, p := range cat.Packs() {
		if _, ok := r.opts.Grants[p.Name]; ok {
			continue
		}
		if err := r.opts.Operator.CheckPackConfig(p); err != nil {
			for _, pe := range unjoin(err) {
				r.problems = append(r.problems, fmt.Errorf("%w (the tools of pack %s are not loaded)", pe, p.Name))
			}
			bad[p] = true
		}
	}
	// The catalog's entries (a later pack may have replaced some) and the
	// modules whose entries a describe export completes.
	entries := map[*packs.ToolSpec]*packs.ToolEntry{}
	merge := map[*packs.Module]bool{}
	refused := map[*packs.Module]bool{}
	for _, p := range cat.Packs() {
		if bad[p] {
			continue
		}
		for _, m := range p.Modules {
			describe, err := checkModule(p, m)
			if err != nil {
				r.problems = append(r.problems, fmt.Errorf("pack %s: %w (its tools are not loaded)", p.Name, err))
				refused[m] = true
				continue
			}
			merge[m] = describe && slices.ContainsFunc(m.Tools, packs.NeedsDescribe)
		}
	}
	for _, te := range cat.Tools() {
		if bad[te.Pack] || refused[te.Module] {
			continue
		}
		entries[te.Tool] = te
		if merge[te.Module] {
			continue
		}
		if err := r.addWasm(te.Pack, te.Module, te.Tool, te.Source, te.Path); err != nil {
			r.problems = append(r.problems, err)
		}
	}
	for _, p := range cat.Packs() {
		if bad[p] {
			continue
		}
		r.packs = append(r.packs, p)
		for _, m := range p.Modules {
			if refused[m] {
				continue
			}
			if len(m.Tools) == 0 || merge[m] {
				if err := r.describeTools(ctx, p, m, entries); err != nil {
					r.problems = append(r.problems, err)
				}
			}
		}
	}
}

// checkModule refuses, before anything is compiled, what validate
// reports from a module's exports (see packs.CheckModule): a command
// module whose exports would trap, a module with no tools to load. It reports whether the module exports describe.
// A module whose file cannot be read is left to fail where it is loaded.
//
// Only the module's framing and export section are read
// (packs.ReadModuleExports): a process that opens the bundled packs to
// call one tool does not read the code of the others.
func checkModule(p *packs.Pack, m *packs.Module) (describe bool, err error) {
	f, err := p.FS.Open(m.Path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, nil
	}
	exports, readErr := packs.ReadModuleExports(f, info.Size())
	var refused []error
	for _, e := range unjoin(packs.CheckModuleExports(m, exports, readErr)) {
		// An entry naming a missing export fails when called, as before.
		if e != nil && !errors.Is(e, packs.ErrNoExport) {
			refused = append(refused, e)
		}
	}
	if len(refused) > 0 {
		return false, errors.Join(refused...)
	}
	return slices.Contains(exports, abi.ExportDescribe), nil
}

// describeTools registers the tools a module's describe export declares.
// When the manifest lists tools for m, those of them still in the catalog
// (entries) are registered, each laid over what the module describes of
// it; an entry the module does not describe is registered as written.
func (r *Registry) describeTools(ctx context.Context, p *packs.Pack, m *packs.Module, entries map[*packs.ToolSpec]*packs.ToolEntry) error {
	hm, err := r.module(ctx, p, m)
	if err != nil {
		return err
	}
	d, err := hm.Describe(ctx)
	if err != nil {
		return fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err)
	}
	described := map[string]*packs.ToolSpec{}
	for _, td := range d.Tools {
		described[td.Name] = packs.DescribedTool(td)
	}
	var errs []error
	add := func(t *packs.ToolSpec, source, path string) {
		p.CompleteTool(t)
		if err := r.addWasm(p, m, t, source, path); err != nil {
			errs = append(errs, err)
		}
	}
	if len(m.Tools) == 0 {
		for _, td := range d.Tools {
			add(described[td.Name], p.Source, p.Dir)
		}
		return errors.Join(errs...)
	}
	for _, entry := range m.Tools {
		te, ok := entries[entry]
		if !ok {
			continue // replaced by a later pack's tool
		}
		t := entry
		dt, ok := described[entry.Name]
		if !ok && slices.Contains(entry.Written, "export") {
			// An entry naming the tool anew by its export.
			for _, td := range d.Tools {
				if td.Export == entry.Export || td.Export == "" && td.Name == entry.Export {
					dt, ok = described[td.Name], true
					break
				}
			}
		}
		if ok {
			t = packs.MergeTool(dt, entry)
		}
		add(t, te.Source, te.Path)
	}
	return errors.Join(errs...)
}

// addWasm registers tool d of module m of pack p.
func (r *Registry) addWasm(p *packs.Pack, m *packs.Module, d *packs.ToolSpec, source, path string) error {
	t := &Tool{ToolSpec: d, Kind: KindWasm, Pack: p.Name, PackVersion: p.Version, PackDescription: p.Description,
		Source: source, Path: path, Module: m.Name}
	r.grants.of(t, p, m)
	t.impl = &wasmTool{reg: r, pack: p, mod: m, export: d.Export}
	where := fmt.Sprintf("pack %s module %s", p.Name, m.Name)
	if kind, _ := packs.IconForm(d.Icon); kind == packs.IconFile && p.FS != nil {
		// An icon that cannot be served leaves the tool without one; it
		// does not keep the tool out.
		uri, err := packs.ReadIcon(p.FS, d.Icon)
		if err != nil {
			r.problems = append(r.problems, fmt.Errorf("%s: tool %q: icon: %w (the tool is shown without it)", where, d.Name, err))
		}
		t.IconURI = uri
	}
	return r.add(t, where)
}

// addNative registers a Go tool.
func (r *Registry) addNative(n Native, kind Kind) error {
	d := n.Describe()
	if d.Name == "" || d.Description == "" {
		return fmt.Errorf("%w: a %s tool needs a name and a description (got name %q)", ErrInvalidTool, kind, d.Name)
	}
	if d.Loading == "" {
		d.Loading = r.opts.ToolSearch.defaultLoading(kind)
	}
	(&packs.Pack{DefaultLoading: d.Loading}).CompleteTool(&d)
	t := &Tool{ToolSpec: &d, Kind: kind, Source: string(kind), impl: nativeTool{n}}
	if kind == KindBuiltin {
		t.impl = builtinTool{n: n, timeout: r.grants.builtinTimeout(n)}
		if b, ok := n.(*builtin); ok {
			t.RunsCode = b.runsScripts
		}
	}
	if err := r.add(t, fmt.Sprintf("%s tool", kind)); err != nil {
		if errors.Is(err, ErrDuplicateTool) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrInvalidTool, err)
	}
	return nil
}

// add checks t's name, compiles its schemas and registers it under its
// name and, when models cannot be shown that name, its APIName; where
// names the source for messages.
func (r *Registry) add(t *Tool, where string) error {
	if err := packs.CheckToolName(t.Name); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	t.APIName = packs.APIToolName(t.Name)
	if prev, ok := r.lookup(t.Name); ok {
		if prev.Name == t.Name {
			return fmt.Errorf("%w: %q is declared by %s and by %s", ErrDuplicateTool, t.Name, describeSource(prev), where)
		}
		return fmt.Errorf("%w: %q, declared by %s, is the name models are shown for tool %q of %s",
			ErrDuplicateTool, t.Name, where, prev.Name, describeSource(prev))
	}
	if t.APIName != t.Name {
		if prev, ok := r.lookup(t.APIName); ok {
			return fmt.Errorf("%w: tool %q of %s is shown to models as %q, which names tool %q of %s",
				ErrDuplicateTool, t.Name, where, t.APIName, prev.Name, describeSource(prev))
		}
	}
	if err := compileSchemas(t, where); err != nil {
		return err
	}
	fitted, err := fitSchemas(t)
	if err != nil {
		return fmt.Errorf("%s: tool %q: %w", where, t.Name, err)
	}
	if fitted {
		if err := compileSchemas(t, where); err != nil {
			return err
		}
	}
	r.tools[t.Name] = t
	if t.APIName != t.Name {
		r.mapped[t.APIName] = t
	}
	return nil
}

// lookup returns the tool called name, or shown to models as name.
func (r *Registry) lookup(name string) (*Tool, bool) {
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	t, ok := r.mapped[name]
	return t, ok
}

// compileSchemas compiles t's schemas, with their zero-allocation checks
// where internal/fastschema covers them.
func compileSchemas(t *Tool, where string) error {
	var err error
	if len(t.InputSchema) > 0 {
		if t.input, err = packs.CompileSchema(t.InputSchema); err != nil {
			return fmt.Errorf("%s: tool %q: input schema: %v", where, t.Name, err)
		}
		t.fast, _ = fastschema.Compile(t.InputSchema)
	}
	if len(t.OutputSchema) > 0 {
		if t.output, err = packs.CompileSchema(t.OutputSchema); err != nil {
			return fmt.Errorf("%s: tool %q: output schema: %v", where, t.Name, err)
		}
		t.fastOut, _ = fastschema.Compile(t.OutputSchema)
	}
	return nil
}

// fitSchemas brings t's compiled schemas into the form MCP clients accept
// (packs.FitInputSchema), whatever their source: a manifest, a module's
// describe export, a native tool. A rewritten schema goes into a copy of
// the description, which may be shared with the catalog; fitted says
// there was one, to be compiled again.
func fitSchemas(t *Tool) (fitted bool, err error) {
	d := *t.ToolSpec
	if err := d.FitSchemas(); err != nil {
		return false, err
	}
	if bytes.Equal(d.InputSchema, t.InputSchema) && bytes.Equal(d.OutputSchema, t.OutputSchema) {
		return false, nil
	}
	t.ToolSpec = &d
	return true, nil
}

func describeSource(t *Tool) string {
	if t.Kind == KindWasm {
		return fmt.Sprintf("pack %s module %s", t.Pack, t.Module)
	}
	return fmt.Sprintf("%s tool", t.Kind)
}

// Packs returns the packs whose tools the registry holds: a pack whose
// config values do not fit its tools' params is left out.
func (r *Registry) Packs() []*packs.Pack { return r.packs }

// Problems returns what kept packs or tools out of the registry.
func (r *Registry) Problems() []error { return append([]error(nil), r.problems...) }

// Tools returns every tool of the registry, sorted by name. It is the
// execution registry, not what a model may see: see Run.Tools.
func (r *Registry) Tools() []*Tool { return r.sorted }

// Tool returns the tool called name, or shown to models as name (its
// APIName), whatever its visibility.
func (r *Registry) Tool(name string) (*Tool, bool) { return r.lookup(name) }

// unjoin flattens errors.Join trees into their leaves.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// moduleSlot compiles a module on first use, without holding the
// registry's lock while it compiles. A failure is kept, unless the caller's
// context ended it: the next call tries again.
type moduleSlot struct {
	mu   sync.Mutex
	done bool
	mod  *host.Module
	err  error
}

// warmupCalls returns the first manifest example of each of m's tools
// that neither writes, nor reads files, nor needs the network, as calls
// that prepare the snapshot its fresh-state calls start from (see
// host.LoadOptions.Warmup): a guest's lazily built state is then built once,
// from the pack's own data, not on every call.
func warmupCalls(m *packs.Module, wasm []byte) []host.WarmupCall {
	exports, _ := packs.ModuleExports(wasm)
	var calls []host.WarmupCall
	for _, t := range m.Tools {
		export := cmp.Or(t.Export, t.Name)
		if len(t.Examples) == 0 || t.SideEffects || t.RequiresFilesystem || t.RequiresNetwork || !slices.Contains(exports, export) {
			continue
		}
		calls = append(calls, host.WarmupCall{Export: export, Input: t.Examples[0].Args})
	}
	return calls
}

// module returns the compiled module, compiling it on first use.
func (r *Registry) module(ctx context.Context, p *packs.Pack, m *packs.Module) (*host.Module, error) {
	if r.opts.Host == nil {
		return nil, fmt.Errorf("%w: pack %s module %s: the registry has no host to run Wasm tools", ErrBadConfig, p.Name, m.Name)
	}
	r.mu.Lock()
	slot, ok := r.modules[m]
	if !ok {
		slot = &moduleSlot{}
		r.modules[m] = slot
	}
	r.mu.Unlock()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.done {
		return slot.mod, slot.err
	}
	wasm, err := fs.ReadFile(p.FS, m.Path)
	if err != nil {
		return nil, fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err)
	}
	lo := host.LoadOptions{Name: p.Name + "/" + m.Path, SHA256: m.SHA256, Once: r.opts.OneCall}
	if !r.opts.OneCall {
		lo.Warmup = warmupCalls(m, wasm)
	}
	mod, err := r.opts.Host.Load(ctx, wasm, lo)
	if errors.Is(err, host.ErrExportNotFound) {
		// A tool's export that cannot be called is reported when the tool
		// is; it does not keep the module's other tools out.
		lo.Warmup = nil
		mod, err = r.opts.Host.Load(ctx, wasm, lo)
	}
	if err != nil {
		err = fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err)
		if ctx.Err() != nil {
			return nil, err
		}
	}
	slot.done, slot.mod, slot.err = true, mod, err
	return mod, err
}
