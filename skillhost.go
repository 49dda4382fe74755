// Package skillhost is the embedding API of skillhost, a WebAssembly
// runtime for LLM agent skills: open an Engine on a set of skill packs and
// call their tools, each in a sandbox that grants only what both the
// pack's manifest requests and the operator allows.
//
//	e, err := skillhost.Open(ctx, skillhost.Config{})
//	res, err := e.Call(ctx, "slugify", json.RawMessage(`{"text":"Hello"}`), nil)
//
// An Engine is safe for concurrent use.
package skillhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server/serveconf"
	"github.com/skillhost/skillhost/tenancy"
)

// Grant is a set of capabilities and limits; see host.Grant.
type Grant = host.Grant

// Mount maps a host folder into a guest; see host.Mount.
type Mount = host.Mount

// Limits bound one call; see host.Limits.
type Limits = host.Limits

// ToolPolicy is the operator's init-time allow/deny list of tool names.
type ToolPolicy = registry.ToolPolicy

// Native is a tool implemented in Go (see registry.Native).
type Native = registry.Native

// EventSink receives the engine's events (see registry.Sink and
// registry.SlogSink).
type EventSink = registry.Sink

// Errors returned by the Engine.
var (
	// ErrToolNotFound is returned when a run has no visible or activatable
	// tool of that name, or the engine none at all.
	ErrToolNotFound = registry.ErrToolNotFound
	// ErrDuplicateTool is returned by Open when two sources (packs, native
	// tools, built-ins) declare the same tool name.
	ErrDuplicateTool = registry.ErrDuplicateTool
)

// Config configures an Engine. The zero Config reads ./skillhost.toml when
// there is one (or the file named by $SKILLHOST_CONFIG) and otherwise opens
// the bundled skills, ~/.skillhost/skills and ./skills, keeping compiled
// code in the user's cache folder and the index in the user's data folder.
type Config struct {
	// StateDir, when set, is the one folder of the compilation cache
	// (StateDir/cache) and the index (StateDir/index.db). Default: the
	// operator config's state_dir, else $SKILLHOST_STATE_DIR, else the
	// user's cache and data folders (see the StateDir function).
	StateDir string
	// Operator is the operator's configuration: sources, skill settings and
	// env values, and per-pack grants. Nil reads it with
	// packs.LoadConfig(ConfigFile).
	Operator *packs.Config
	// ConfigFile names the operator config read when Operator is nil; ""
	// means $SKILLHOST_CONFIG or ./skillhost.toml when it exists.
	ConfigFile string
	// PackDirs are further folders of packs and skills, loaded as installed
	// sources after those of the operator config.
	PackDirs []string
	// InstalledDir is the folder `skillhost install` writes (one folder
	// per installed skill or pack): loaded as an installed source after
	// PackDirs whenever it exists, at Open and at each Reload, so that
	// what is installed while an engine runs reaches it at its next
	// Reload.
	InstalledDir string
	// CheckSources, when set, is called before the sources are read, at
	// Open and at each Reload: its error fails Open, and makes a Reload
	// keep the packs already loaded. The CLI checks the installed folder
	// against skillhost.lock with it, so that files changed on disk are
	// never loaded.
	CheckSources func(ctx context.Context) error
	// NoBundled leaves the bundled skills and pack out.
	NoBundled bool
	// NoUserSources leaves out the user (~/.skillhost/skills) and workspace
	// (./skills) sources, for embedders that name every folder themselves.
	NoUserSources bool
	// Grants are the operator's grants, by pack name; an entry replaces the
	// grant the operator config gives that pack, config values included
	// (which are then not checked against the pack's config params). A
	// module runs under the intersection of its request and its pack's
	// grant (host.Intersect); a pack that neither names gets nothing but
	// the default limits. A module may call through tool_call only the
	// tools its grant lists in Tools ("*": every tool it requests). A
	// grant's limits are ceilings, as [packs.<name>] limits are: a field
	// it leaves zero is held to the default limits. A grant that leaves
	// Isolation empty gets the operator config's [sandbox] isolation.
	Grants map[string]Grant
	// GrantFor, when set, is called with the operator's grant of each
	// Wasm module (from Grants or the operator config) as the registry is
	// built, with the module's pack and tool names; when it returns true,
	// the grant it returns replaces it, as a Grants entry does. Grants are
	// computed once: skillhost call uses it to add its grant flags to the
	// grant of the called tool's module.
	GrantFor func(pack string, tools []string, operator Grant) (Grant, bool)
	// DefaultLimits are the operator's default ceilings for every pack;
	// their non-zero fields win over the operator config's [limits]. A
	// module's limits are held to its pack's grant where that sets them,
	// else to these defaults, else to the built-in ones (host.DefaultTimeout
	// and the rest): a manifest can lower a limit, never raise it. The
	// default timeout (this one, else [limits] timeout) is also the
	// deadline of every call of skillhost's own tools (tool_search,
	// skill_get, read_skill_resource…), which end as a timeout result
	// when they pass it.
	DefaultLimits Limits
	// MemoryBudget bounds the memory the engine holds between calls, in
	// bytes: the linear memory of idle warm instances and the snapshots
	// fresh-state calls restore from, across every module, grant profile
	// and tenant together. Past it the least recently used are released
	// and later calls instantiate afresh. 0 takes the operator config's
	// [server] memory_budget, and DefaultMemoryBudget when that is unset
	// too (see host.Config.WithMemoryBudget).
	MemoryBudget uint64
	// CountAllFuel makes every Wasm call count its fuel. By default a call
	// without a fuel limit checks, at loop heads and function entries, a
	// flag the host changes every 2 ms instead, once a call of its module
	// has run long (on Linux; see host.Config.WithTickCheck): cheaper on
	// long computations, but such a call reports no fuel and sees its
	// deadline up to 2 ms late. The operator
	// config's [server] tick_check = false sets it too. A run whose tenant
	// has a fuel quota counts fuel whatever this says.
	CountAllFuel bool
	// OneCall opens the engine for a process that makes one call, as
	// `skillhost call` does: each module is compiled only as that call
	// runs it (with the tick check, unless CountAllFuel), its initialisers
	// run in the call's own instance, and no warm-up or snapshot is made
	// (host.LoadOptions.Once). A call that counts fuel (a fuel limit, a
	// tenant's fuel quota) then compiles the module that counts it too.
	OneCall bool
	// IndexPath is the discovery index file; default StateDir/index.db,
	// else index.db in the user's data folder (see the StateDir function).
	IndexPath string
	// NoIndex opens the engine without its discovery index: Open neither
	// creates nor writes the index file, and the searches and skill
	// retrieval return ErrNoIndex. For callers that only run tools, such
	// as skillhost call.
	NoIndex bool
	// NoCache compiles modules in memory only: Open creates no
	// compilation cache folder and nothing is written to one. With NoIndex
	// an engine writes nothing at all, for commands that only read, such
	// as skillhost list and show.
	NoCache bool
	// Index adjusts the discovery index (nil: defaults). ToolSearch's
	// PreferredNamespaces fill PreferredNamespaces when it has none, and
	// [skill_discovery] redact_pii = false sets DisableRedaction.
	Index *index.Options
	// ToolPolicy removes tools from the execution registry: no run can
	// see, find or call them.
	ToolPolicy ToolPolicy
	// Tools are Go tools the embedder registers (registry.Func builds one
	// from a typed function; Native is the hand-written form).
	Tools []Native
	// GoSkills are skills written in Go, served by the skill tools
	// (list_skills, load_skill, read_skill_resource, run_skill_script)
	// beside the catalog's; one replaces a file skill of the same name.
	// They are indexed for skill_search and skill_get too, in the index
	// of the state folder: every process sharing that folder syncs the
	// index to its own skills, so an engine with Go skills should have a
	// StateDir of its own.
	GoSkills []Skill
	// ToolSearch says how a run's tools are found and activated and what
	// its model sees from the start: the operator config's [tool_search]
	// section, whose owner is the registry. What the embedder sets here
	// wins over the file, a switch set to false included; the file fills
	// the fields left zero.
	ToolSearch registry.ToolSearchConfig
	// ToolExamples say how renderings of a run's tools show their
	// examples: the operator config's [tool_examples] section, the
	// embedder's fields winning over the file's as in ToolSearch.
	ToolExamples registry.ExamplesConfig
	// Render says which features of each model API the renderings of a
	// run's tools use; Engine.RenderOptions returns it with ToolExamples
	// applied.
	Render RenderOptions
	// Skills configures skill discovery: the model's skill tools,
	// Engine.Relevant's token budget, redaction, the default scope of pack
	// skills and the skill directory: the operator config's
	// [skill_discovery] section, whose owner is the registry, the
	// embedder's fields winning over the file's as in ToolSearch.
	Skills registry.SkillsConfig
	// Events receives the events of the registry and its runs; nil drops
	// them.
	Events EventSink
	// Scope is the tenant and project this engine serves: searches see the
	// skills of this scope, and a pack's skills are stored at its
	// scope_mode (project by default) filled with these IDs — global when
	// the engine has none. The zero Scope is global.
	Scope index.Scope
	// Tenants are the tenants whose packs' skills the engine keeps apart:
	// the skills of a pack a tenant owns are stored at that tenant's
	// scope, whatever its scope_mode, and only its runs find, list or read
	// them; the skills of a pack no tenant may use (tenancy.NoOne) are not
	// stored. Nil means the operator config's [tenants.<id>] sections and
	// [server] shared_packs. skillhost serve's tenants see tools by the
	// same rule.
	Tenants *tenancy.Set
	// Services are capability providers by namespace: "mail" answers a
	// guest's capability_call of "mail.send", "mail.list"… beside the
	// commands of the operator config's [capabilities.providers]
	// sections (a namespace in both is an error). A guest reaches one
	// only for a service its manifest requests and its grant allows (see
	// ServiceProvider).
	Services map[string]ServiceProvider
}

// Engine is the façade over one generation of loaded packs and skills
// (the catalog and the execution registry built from it) and the
// discovery index. The registry holds and runs the tools: Call goes
// through the engine's own run, NewRun gives each model its own. The index
// searches tools and skills. Reload swaps the generation whole.
type Engine struct {
	cfg   Config
	op    *packs.Config
	specs []packs.SourceSpec
	host  *host.Host
	idx   *index.Store
	svc   engineServices // capability providers (services.go)
	// tenants are Config.Tenants, or the operator config's.
	tenants *tenancy.Set

	// cur is what the engine serves now; Reload swaps it whole.
	cur      atomic.Pointer[loaded]
	reloadMu sync.Mutex
}

// loaded is one generation of the engine's catalog: the packs and skills
// read from the sources, the registry built from them, and what went wrong.
// Runs made from one generation keep it when Reload swaps in the next, so
// a call in flight finishes on the tools it started with.
type loaded struct {
	cat      *packs.Catalog
	reg      *registry.Registry
	packs    []*packs.Pack
	problems []error
	reports  []index.PackReport
	// run is the engine's own run, for Call: every tool reachable,
	// deferred ones activated on first use.
	run *registry.Run
}

// now returns the current generation.
func (e *Engine) now() *loaded { return e.cur.Load() }

// Tool is one tool of the execution registry: its description (the
// pack's manifest entry, a native tool's, a built-in's), where it comes
// from and, for a Wasm tool, the grant it runs with.
type Tool = registry.Tool

// Kind says how a tool is implemented: KindWasm, KindNative or
// KindBuiltin.
type Kind = registry.Kind

// Kinds of tools.
const (
	KindWasm    = registry.KindWasm
	KindNative  = registry.KindNative
	KindBuiltin = registry.KindBuiltin
)

// Origin says which side set one of a tool's effective limits.
type Origin = registry.Origin

// The sides a limit may come from.
const (
	OriginPack            = registry.OriginPack
	OriginOperator        = registry.OriginOperator
	OriginOperatorDefault = registry.OriginOperatorDefault
	OriginDefault         = registry.OriginDefault
)

// Where the operator's grant for a pack comes from (Tool.GrantFrom).
const (
	GrantFromConfig   = registry.GrantFromConfig
	GrantFromEmbedder = registry.GrantFromEmbedder
	GrantFromNone     = registry.GrantFromNone
)

// Open loads the configured sources, merges them by precedence and brings
// the discovery index up to date. A broken skill or pack does not stop the
// others: Open succeeds with everything that loaded and Problems lists the
// rest. Modules are compiled on first use.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	op := cfg.Operator
	if op == nil {
		var err error
		if op, err = packs.LoadConfig(cfg.ConfigFile); err != nil {
			return nil, err
		}
	}
	cfg, err := withOperatorSections(cfg, op)
	if err != nil {
		return nil, err
	}
	serve := serveconf.Of(op)
	tenants := cfg.Tenants
	if tenants == nil {
		if tenants, err = serve.Tenancy(); err != nil {
			return nil, err
		}
	}
	st := StateDir(cfg, op)
	cfg.StateDir, cfg.IndexPath = st.Dir, st.Index
	var specs []packs.SourceSpec
	for _, sp := range op.SourceSpecs() {
		switch {
		case sp.Name == packs.SourceBundled && cfg.NoBundled:
		case (sp.Name == packs.SourceUser || sp.Name == packs.SourceWorkspace) && cfg.NoUserSources:
		default:
			specs = append(specs, sp)
		}
	}
	specs = insertInstalled(specs, cfg.PackDirs, op.Sources.MaxDepth)
	if cfg.InstalledDir != "" {
		specs = insertSources(specs, packs.SourceSpec{Name: packs.SourceInstalled, Dir: cfg.InstalledDir, MaxDepth: op.Sources.MaxDepth, Optional: true})
	}
	hc := host.NewConfig().WithDefaultLimits(op.Limits).WithDefaultLimits(cfg.DefaultLimits)
	if !cfg.NoCache {
		hc = hc.WithCacheDir(st.Cache)
	}
	if cfg.MemoryBudget == 0 {
		cfg.MemoryBudget = serve.Server.MemoryBudget
	}
	if cfg.MemoryBudget == 0 {
		cfg.MemoryBudget = DefaultMemoryBudget
	}
	tick := !cfg.CountAllFuel && (serve.Server.TickCheck == nil || *serve.Server.TickCheck)
	hc = hc.WithMemoryBudget(cfg.MemoryBudget).WithTickCheck(tick)
	h, err := host.New(ctx, hc)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, op: op, specs: specs, host: h, tenants: tenants}
	if err := e.openServices(); err != nil {
		h.Close(ctx)
		return nil, err
	}
	if !cfg.NoIndex {
		// The built-in search tools read the index: it is opened first,
		// and brought up to date once the registry exists.
		if err := e.openIndex(ctx); err != nil {
			h.Close(ctx)
			return nil, err
		}
	}
	l, err := e.load(ctx)
	if err != nil {
		h.Close(ctx)
		if e.idx != nil {
			e.idx.Close()
		}
		return nil, err
	}
	e.cur.Store(l)
	if cfg.NoIndex {
		return e, nil
	}
	if err := e.syncOpenedIndex(ctx, l); err != nil {
		h.Close(ctx)
		e.idx.Close()
		return nil, err
	}
	return e, nil
}

// load reads the sources and builds a registry over them: one generation.
func (e *Engine) load(ctx context.Context) (*loaded, error) {
	if e.cfg.CheckSources != nil {
		if err := e.cfg.CheckSources(ctx); err != nil {
			return nil, err
		}
	}
	cat, err := packs.LoadCatalog(ctx, e.specs, &packs.CatalogOptions{Config: e.op})
	if cat == nil {
		return nil, err
	}
	l := &loaded{cat: cat}
	if err != nil {
		l.problems = append(l.problems, unjoin(err)...)
	}
	cfg := e.cfg
	opts := registry.Options{
		Host: e.host, Operator: e.op, Grants: cfg.Grants, DefaultLimits: cfg.DefaultLimits,
		Policy: cfg.ToolPolicy, Natives: cfg.Tools, ToolSearch: cfg.ToolSearch, Events: cfg.Events, GrantFor: cfg.GrantFor,
		Services: e.svc.services, OneCall: cfg.OneCall,
	}
	if opts.Builtins, err = e.builtins(cat); err != nil {
		return nil, err
	}
	reg, err := registry.New(ctx, cat, opts)
	if err != nil {
		return nil, err
	}
	l.reg = reg
	l.problems = append(l.problems, reg.Problems()...)
	l.problems = append(l.problems, e.serviceProblems()...)
	l.packs = reg.Packs()
	if l.run, err = reg.NewRun(registry.RunContext{Tenant: cfg.Scope.TenantID, Project: cfg.Scope.ProjectID, Session: "engine"}, nil); err != nil {
		return nil, err
	}
	return l, nil
}

// Busy says that tenant has a request in flight outside any guest — being
// read, checked or answered — until done is called. While guests of more
// than one tenant compete for the processors, each tenant's are held to
// an equal share (a guest past it waits at its next fuel slice), and a
// busy tenant counts as wanting a processor, so that its request's next
// step is not queued behind another tenant's spinning guests. A server
// calls it for each request; calls of Run.Call count on their own (the
// run's tenant is RunContext.Tenant).
func (e *Engine) Busy(tenant string) (done func()) { return e.host.Busy(tenant) }

// DefaultMemoryBudget is the memory an engine holds between calls when
// neither Config.MemoryBudget nor the operator config sets a budget.
const DefaultMemoryBudget = 1 << 30

// MemoryStats says what the engine holds between calls against its
// memory budget (Config.MemoryBudget).
type MemoryStats = host.MemoryStats

// MemoryStats returns what the engine holds between calls: idle warm
// instances and snapshots, against its memory budget.
func (e *Engine) MemoryStats() MemoryStats { return e.host.MemoryStats() }

// Reload reads the sources again and swaps in the new catalog whole: the
// tools, skills and problems Open would find now. Runs made before keep
// the catalog they started with until they end, so no call in flight
// fails; runs made after see the new one. Modules whose bytes did not
// change are not compiled again. On error the engine keeps serving what
// it had.
func (e *Engine) Reload(ctx context.Context) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	l, err := e.load(ctx)
	if err != nil {
		return err
	}
	if err := e.syncIndex(ctx, l); err != nil {
		return err
	}
	e.cur.Store(l)
	return nil
}

// StateDirEnv names the environment variable that gives the state folder
// when neither Config.StateDir nor an operator config file does.
const StateDirEnv = "SKILLHOST_STATE_DIR"

// StateFolders are where an engine keeps what it writes: compiled machine
// code and the discovery index.
type StateFolders struct {
	// Dir is the one state folder named by Config.StateDir, the config
	// file's state_dir or $SKILLHOST_STATE_DIR; "" when none names one
	// and the state is kept in the user's folders.
	Dir string
	// Cache is the compilation cache folder: Dir/cache, else skillhost in
	// the user's cache folder (os.UserCacheDir: $XDG_CACHE_HOME or
	// ~/.cache on Linux, ~/Library/Caches on macOS, %LocalAppData% on
	// Windows).
	Cache string
	// Index is the discovery index file: Config.IndexPath, else
	// Dir/index.db, else skillhost/index.db in the user's data folder
	// ($XDG_DATA_HOME or ~/.local/share on Linux, ~/Library/Application
	// Support on macOS, %LocalAppData% on Windows).
	Index string
}

// StateDir returns the folders an engine opened with cfg keeps its state
// in, op being the operator configuration read for it (nil: cfg.Operator).
// One state folder is the first of cfg.StateDir, the config file's
// state_dir and $SKILLHOST_STATE_DIR; without one, the compilation cache
// is in the user's cache folder and the index in the user's data folder.
// When the user's folders cannot be found (no home folder), .skillhost in
// the working directory is the state folder. Open resolves them here, and
// so does every skillhost command that needs them without opening an
// engine.
func StateDir(cfg Config, op *packs.Config) StateFolders {
	if op == nil {
		op = cfg.Operator
	}
	dir := cfg.StateDir
	if dir == "" && op != nil && op.File != "" && op.StateDirSet() {
		dir = op.StateDir
	}
	if dir == "" {
		dir = os.Getenv(StateDirEnv)
	}
	var st StateFolders
	if dir == "" {
		cache, cerr := os.UserCacheDir()
		data, derr := userDataDir()
		if cerr == nil && derr == nil {
			st = StateFolders{Cache: filepath.Join(cache, "skillhost"), Index: filepath.Join(data, "skillhost", "index.db")}
		} else {
			dir = packs.DefaultStateDir
		}
	}
	if dir != "" {
		st = StateFolders{Dir: dir, Cache: filepath.Join(dir, "cache"), Index: filepath.Join(dir, "index.db")}
	}
	if cfg.IndexPath != "" {
		st.Index = cfg.IndexPath
	}
	return st
}

// userDataDir is the user's data folder: $XDG_DATA_HOME or ~/.local/share
// on Unix, ~/Library/Application Support on macOS, %LocalAppData% on
// Windows, $home/lib on Plan 9.
func userDataDir() (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		return os.UserConfigDir() // ~/Library/Application Support
	case "plan9":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "lib"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		if !filepath.IsAbs(d) {
			return "", errors.New("$XDG_DATA_HOME is not an absolute path")
		}
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share"), nil
}

// insertInstalled puts extra installed folders after the configured
// installed sources and before the user and workspace ones.
func insertInstalled(specs []packs.SourceSpec, dirs []string, depth int) []packs.SourceSpec {
	extra := make([]packs.SourceSpec, 0, len(dirs))
	for _, d := range dirs {
		extra = append(extra, packs.SourceSpec{Name: packs.SourceInstalled, Dir: d, MaxDepth: depth})
	}
	return insertSources(specs, extra...)
}

// insertSources puts extra installed sources before the user and
// workspace sources, after the others.
func insertSources(specs []packs.SourceSpec, extra ...packs.SourceSpec) []packs.SourceSpec {
	at := len(specs)
	for i, sp := range specs {
		if sp.Name == packs.SourceUser || sp.Name == packs.SourceWorkspace {
			at = i
			break
		}
	}
	out := append([]packs.SourceSpec(nil), specs[:at]...)
	out = append(out, extra...)
	return append(out, specs[at:]...)
}

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

// Tools returns every tool of the execution registry, sorted by name.
// What a model may see is a run's catalog (NewRun, Run.Tools).
func (e *Engine) Tools() []*Tool { return e.now().reg.Tools() }

// Tool returns the tool called name.
func (e *Engine) Tool(name string) (*Tool, error) {
	t, ok := e.now().reg.Tool(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrToolNotFound, name)
	}
	return t, nil
}

// CallOptions adjust one call.
type CallOptions = registry.CallOptions

// Result is a tool call's outcome: Output on success, Error when the tool
// failed (a failure is a result shown to the model, not a Go error).
type Result = registry.Result

// Call runs the tool called name with args (a JSON object; empty means
// {}) in the engine's own run, where every tool of the registry is
// reachable: for the CLI and embedders that are their own model. A model's
// calls go through a Run (NewRun), which decides what it may see. A
// tool's failure, and arguments that do not match its input schema, are a
// Result with IsError and a nil error; an error is returned only when the
// call could not be made at all (ErrToolNotFound).
func (e *Engine) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	return e.now().run.Call(ctx, name, args, opts)
}

// RunContext identifies who a run serves: tenant, project, session, user
// and chat type.
type RunContext = registry.RunContext

// RunOptions adjust one run: its visibility policy, its activation
// scope, and who is told of an activation.
type RunOptions = registry.RunOptions

// Run is one request's or session's view of the engine's tools: its
// visible catalog (Run.Tools), the deferred tools it may activate
// (Run.Deferred) and its calls (Run.Call).
type Run = registry.Run

// NewRun starts a run for rc. With session activation (Config.ToolSearch),
// rc.Session is required.
func (e *Engine) NewRun(rc RunContext, opts *RunOptions) (*Run, error) {
	return e.now().reg.NewRun(rc, opts)
}

// EndSession forgets what a tenant's session activated, when the session
// ends: without it a long-running server keeps every session's.
func (e *Engine) EndSession(tenant, session string) {
	e.now().reg.EndSession(tenant, session)
}

// Close stops the capability provider commands and releases the
// engine's runtime and index.
func (e *Engine) Close(ctx context.Context) error {
	e.closeServices()
	err := e.host.Close(ctx)
	if e.idx != nil {
		err = errors.Join(err, e.idx.Close())
	}
	return err
}

// Host returns the engine's Wasm host, for running modules outside packs.
func (e *Engine) Host() *host.Host { return e.host }
