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
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// Grant is a set of capabilities and limits; see host.Grant.
type Grant = host.Grant

// Mount maps a host folder into a guest; see host.Mount.
type Mount = host.Mount

// Limits bound one call; see host.Limits.
type Limits = host.Limits

// Errors returned by the Engine.
var (
	// ErrToolNotFound is returned when no loaded pack has a tool of that name.
	ErrToolNotFound = errors.New("skillhost: tool not found")
	// ErrDuplicateTool is returned by Open when two packs, or two modules of
	// one pack, declare the same tool name.
	ErrDuplicateTool = errors.New("skillhost: duplicate tool name")
	// ErrInvalidArguments is returned when a call's arguments are not a
	// JSON object.
	ErrInvalidArguments = errors.New("skillhost: invalid arguments")
)

// Config configures an Engine. The zero Config reads ./skillhost.toml when
// there is one (or the file named by $SKILLHOST_CONFIG) and otherwise opens
// the bundled skills, ~/.skillhost/skills and ./skills with the state dir
// .skillhost in the working directory.
type Config struct {
	// StateDir holds the compilation cache (StateDir/cache) and the index
	// (StateDir/index.db). Default: the operator config's state_dir, else
	// $SKILLHOST_STATE_DIR, else ".skillhost".
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
	// DefaultLimits are the operator's default ceilings for every pack;
	// their non-zero fields win over the operator config's [limits]. A
	// module's limits are held to its pack's grant where that sets them,
	// else to these defaults, else to the built-in ones (host.DefaultTimeout
	// and the rest): a manifest can lower a limit, never raise it.
	DefaultLimits Limits
	// IndexPath is the discovery index file; default StateDir/index.db.
	IndexPath string
	// Index adjusts the discovery index (nil: defaults).
	Index *index.Options
	// Scope is the tenant and project this engine serves: searches see the
	// skills of this scope, and a pack's skills are stored at its
	// scope_mode (project by default) filled with these IDs — global when
	// the engine has none. The zero Scope is global.
	Scope index.Scope
}

// Engine holds loaded packs and skills, runs their tools and searches
// them.
type Engine struct {
	cfg   Config
	op    *packs.Config
	host  *host.Host
	cat   *packs.Catalog
	idx   *index.Store
	packs []*packs.Pack
	tools map[string]*Tool

	problems []error
	reports  []index.PackReport

	mu      sync.Mutex
	modules map[*packs.Module]*host.Module
}

// Tool is one callable tool and where it comes from.
type Tool struct {
	Name        string
	Description string
	Pack        string
	PackVersion string
	Source      string
	// Path is the manifest that declares the tool, with its source root.
	Path   string
	Module string
	Export string
	// InputSchema and OutputSchema are JSON Schemas, when declared.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Risk         string
	SideEffects  bool
	Idempotent   bool
	Hidden       bool
	Loading      string
	Category     string
	Tags         []string
	// ConfigParams are the settings the tool declares; their values are
	// in Effective.Config (a secret param's value too: print it only
	// through its type, as `skillhost show` does).
	ConfigParams []packs.ConfigParam
	// Requested is what the module asks for, Operator what the operator
	// grants its pack, and Effective their intersection (host.Intersect):
	// what it gets. Operator's limits are the ceilings, every field
	// resolved: the grant's own, else the operator's defaults, else the
	// built-in ones. Effective's are the manifest's held to them.
	Requested Grant
	Operator  Grant
	Effective Grant
	// GrantFrom says where Operator comes from: GrantFromConfig,
	// GrantFromEmbedder or GrantFromNone.
	GrantFrom string
	// LimitFrom says which side set each limit of Effective, by the name
	// host.Limits gives it in JSON ("timeout", "max_memory_bytes", …).
	LimitFrom map[string]Origin
	// Isolation is where the tool's calls run: Effective.Isolation, or
	// host.IsolationInProcess, the host's default, when that is empty.
	// IsolationFrom says who chose it: OriginOperator (the pack's section
	// or its Config.Grants entry), OriginOperatorDefault (the config's
	// [sandbox] section) or OriginDefault. A manifest has no say.
	Isolation     host.Isolation
	IsolationFrom Origin

	def *packs.Tool
	mod *packs.Module
	pk  *packs.Pack
}

// Origin says which side set one of a tool's effective limits.
type Origin string

// The sides a limit may come from.
const (
	// OriginPack is the pack's manifest: its value is at or below the
	// operator's ceiling.
	OriginPack Origin = "pack"
	// OriginOperator is the operator's grant for the pack: the limits of
	// its [packs.<name>] section or of its Config.Grants entry.
	OriginOperator Origin = "operator"
	// OriginOperatorDefault is the operator's default for every pack:
	// the config's [limits] section or Config.DefaultLimits.
	OriginOperatorDefault Origin = "operator default"
	// OriginDefault is the built-in default (host.DefaultTimeout and the
	// rest).
	OriginDefault Origin = "default"
)

// Where the operator's grant for a pack comes from (Tool.GrantFrom).
const (
	// GrantFromConfig is the pack's [packs.<name>] section of the
	// operator config.
	GrantFromConfig = "config"
	// GrantFromEmbedder is the pack's entry in Config.Grants.
	GrantFromEmbedder = "embedder"
	// GrantFromNone says neither names the pack: it is granted nothing,
	// and the default limits hold.
	GrantFromNone = "none"
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
	if cfg.StateDir == "" && op.File != "" {
		cfg.StateDir = op.StateDir
	}
	if cfg.StateDir == "" {
		cfg.StateDir = os.Getenv("SKILLHOST_STATE_DIR")
	}
	if cfg.StateDir == "" {
		cfg.StateDir = ".skillhost"
	}
	if cfg.IndexPath == "" {
		cfg.IndexPath = filepath.Join(cfg.StateDir, "index.db")
	}
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
	cat, err := packs.LoadCatalog(ctx, specs, &packs.CatalogOptions{Config: op})
	if cat == nil {
		return nil, err
	}
	hc := host.NewConfig().WithCacheDir(filepath.Join(cfg.StateDir, "cache")).
		WithDefaultLimits(hostLimits(op.Limits)).WithDefaultLimits(cfg.DefaultLimits)
	h, herr := host.New(ctx, hc)
	if herr != nil {
		return nil, herr
	}
	e := &Engine{cfg: cfg, op: op, host: h, cat: cat, packs: cat.Packs(), tools: map[string]*Tool{}, modules: map[*packs.Module]*host.Module{}}
	if err != nil {
		e.problems = append(e.problems, unjoin(err)...)
	}
	if err := e.loadTools(ctx); err != nil {
		h.Close(ctx)
		return nil, err
	}
	if err := e.openIndex(ctx); err != nil {
		h.Close(ctx)
		return nil, err
	}
	return e, nil
}

// insertInstalled puts extra installed folders after the configured
// installed sources and before the user and workspace ones.
func insertInstalled(specs []packs.SourceSpec, dirs []string, depth int) []packs.SourceSpec {
	at := len(specs)
	for i, sp := range specs {
		if sp.Name == packs.SourceUser || sp.Name == packs.SourceWorkspace {
			at = i
			break
		}
	}
	extra := make([]packs.SourceSpec, 0, len(dirs))
	for _, d := range dirs {
		extra = append(extra, packs.SourceSpec{Name: packs.SourceInstalled, Dir: d, MaxDepth: depth})
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

// loadTools registers the tools of the catalog, asking a module's describe
// export when its manifest lists none. A pack whose [packs.<name>.config]
// values do not fit its config params loads no tools; its problems are
// reported.
func (e *Engine) loadTools(ctx context.Context) error {
	bad := e.checkPackConfigs()
	for _, te := range e.cat.Tools() {
		if bad[te.Pack] {
			continue
		}
		e.addTool(te.Pack, te.Module, te.Tool, te.Source, te.Path)
	}
	for _, p := range e.packs {
		for _, m := range p.Modules {
			if len(m.Tools) == 0 {
				if err := e.describeTools(ctx, p, m); err != nil {
					e.problems = append(e.problems, err)
				}
			}
		}
	}
	return nil
}

// checkPackConfigs checks each pack's config values against the config
// params its tools declare, drops the packs that fail from e.packs and
// returns them. A pack the embedder grants through Config.Grants is taken
// as granted.
func (e *Engine) checkPackConfigs() map[*packs.Pack]bool {
	bad := map[*packs.Pack]bool{}
	kept := e.packs[:0:0]
	for _, p := range e.packs {
		if _, ok := e.cfg.Grants[p.Name]; !ok {
			if err := e.op.CheckPackConfig(p); err != nil {
				for _, pe := range unjoin(err) {
					e.problems = append(e.problems, fmt.Errorf("%w (the tools of pack %s are not loaded)", pe, p.Name))
				}
				bad[p] = true
				continue
			}
		}
		kept = append(kept, p)
	}
	e.packs = kept
	return bad
}

func (e *Engine) describeTools(ctx context.Context, p *packs.Pack, m *packs.Module) error {
	hm, err := e.module(ctx, p, m)
	if err != nil {
		return err
	}
	d, err := hm.Describe(ctx)
	if err != nil {
		return fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err)
	}
	for _, td := range d.Tools {
		export := td.Export
		if export == "" {
			export = td.Name
		}
		if prev, ok := e.tools[td.Name]; ok {
			return fmt.Errorf("%w: %q is declared by pack %s module %s and by pack %s module %s",
				ErrDuplicateTool, td.Name, prev.Pack, prev.Module, p.Name, m.Name)
		}
		t := &packs.Tool{Name: td.Name, Export: export, Description: td.Description,
			InputSchema: td.InputSchema, OutputSchema: td.OutputSchema, Tags: td.Tags}
		p.CompleteTool(t)
		e.addTool(p, m, t, p.Source, p.Dir)
	}
	return nil
}

func (e *Engine) addTool(p *packs.Pack, m *packs.Module, d *packs.Tool, source, path string) {
	req := requestGrant(m)
	op, from := e.operatorGrant(p, m)
	granted := op.Limits
	op.Limits = e.host.Config().Resolve(granted)
	isoFrom := OriginOperator
	if op.Isolation == host.IsolationDefault {
		op.Isolation, isoFrom = host.Isolation(e.op.Sandbox.Isolation), OriginOperatorDefault
		if op.Isolation == host.IsolationDefault {
			isoFrom = OriginDefault
		}
	}
	eff := host.Intersect(req, op)
	iso := eff.Isolation
	if iso == host.IsolationDefault {
		iso = host.IsolationInProcess // the engine leaves the host's default as it is
	}
	e.tools[d.Name] = &Tool{
		Name: d.Name, Description: d.Description, Pack: p.Name, PackVersion: p.Version, Source: source, Path: path,
		Module: m.Name, Export: d.Export, InputSchema: d.InputSchema, OutputSchema: d.OutputSchema,
		Risk: d.Risk(), SideEffects: d.SideEffects, Idempotent: d.Idempotent, Hidden: d.Hidden, Tags: d.Tags,
		Loading: d.Loading, Category: d.Category, ConfigParams: d.ConfigParams,
		Requested: req, Operator: op, Effective: eff, GrantFrom: from, LimitFrom: e.limitSources(req.Limits, granted, eff.Limits),
		Isolation: iso, IsolationFrom: isoFrom,
		def: d, mod: m, pk: p,
	}
}

// limitSources says which side set each effective limit: the pack, when
// its own value held (at or below the ceiling); else the operator's grant
// for the pack, when it sets the limit; else the operator's defaults, when
// they set it; else the built-in default.
func (e *Engine) limitSources(req, granted, eff Limits) map[string]Origin {
	r, g := req.Fields(), granted.Fields()
	file, embedder := hostLimits(e.op.Limits).Fields(), e.cfg.DefaultLimits.Fields()
	out := make(map[string]Origin, len(r))
	for i, f := range eff.Fields() {
		switch {
		case r[i].Value != 0 && r[i].Value == f.Value:
			out[f.Name] = OriginPack
		case g[i].Value != 0:
			out[f.Name] = OriginOperator
		case file[i].Value != 0 || embedder[i].Value != 0:
			out[f.Name] = OriginOperatorDefault
		default:
			out[f.Name] = OriginDefault
		}
	}
	return out
}

// requestGrant turns a manifest's request and limits into a Grant. Its
// config holds the defaults: request.config and the config params'
// defaults.
func requestGrant(m *packs.Module) Grant {
	r := m.Request
	g := Grant{
		AllowedHosts: r.AllowedHosts,
		Config:       m.ConfigDefaults(),
		Tools:        r.Tools,
		Capabilities: r.Services,
		Limits:       hostLimits(m.Limits),
	}
	for _, mr := range r.Mounts {
		g.Mounts = append(g.Mounts, Mount{GuestPath: mr.Guest, ReadOnly: mr.ReadOnly})
	}
	if len(r.Env) > 0 {
		g.Env = map[string]string{}
		for _, name := range r.Env {
			g.Env[name] = ""
		}
	}
	return g
}

// operatorGrant returns the operator's grant for module m of pack p, and
// where it comes from: Config.Grants, else the operator config's
// [packs.<name>] section, else nothing. The bundled pack is no exception:
// its modules request no tools or services, and its folders, hosts and
// env values are the operator's to give. The limits are the grant's own,
// not yet resolved against the defaults, and so is the isolation (empty
// when the grant does not say).
func (e *Engine) operatorGrant(p *packs.Pack, m *packs.Module) (Grant, string) {
	if g, ok := e.cfg.Grants[p.Name]; ok {
		return g, GrantFromEmbedder
	}
	if pg, ok := e.op.Packs[p.Name]; ok {
		return packGrant(pg, m), GrantFromConfig
	}
	return Grant{}, GrantFromNone
}

// packGrant turns a [packs.<name>] section into module m's Grant. Of the
// config values, m gets those of the keys it declares.
func packGrant(pg packs.PackGrant, m *packs.Module) Grant {
	g := Grant{
		Config:              pg.ModuleConfig(m),
		AllowedHosts:        pg.AllowedHosts,
		AllowPrivateNetwork: pg.AllowPrivateNetwork,
		Capabilities:        pg.Services,
		Tools:               pg.Tools,
		Limits:              hostLimits(pg.Limits),
		Isolation:           host.Isolation(pg.Isolation),
	}
	for _, mt := range pg.Mounts {
		g.Mounts = append(g.Mounts, Mount{HostPath: mt.Host, GuestPath: mt.Guest, ReadOnly: mt.ReadOnly})
	}
	if len(pg.Env) > 0 {
		g.Env = make(map[string]string, len(pg.Env))
		for k, v := range pg.Env {
			g.Env[k] = v.Value()
		}
	}
	return g
}

// hostLimits converts limits as the packs package reads them (pack.yaml,
// [limits], [packs.<name>] limits) into the host's. It is the one place
// the two types meet; a limit the files cannot set (max_kernel_bytes)
// stays zero.
func hostLimits(l packs.Limits) Limits {
	return Limits{
		Timeout:              l.Timeout,
		MaxMemoryBytes:       l.MaxMemoryBytes,
		MaxOutputBytes:       l.MaxOutputBytes,
		MaxLogBytes:          l.MaxLogBytes,
		MaxVarBytes:          l.MaxVarBytes,
		MaxHTTPResponseBytes: l.MaxHTTPResponseBytes,
		MaxFuel:              l.MaxFuel,
		MaxWriteBytes:        l.MaxWriteBytes,
		MaxOpenFiles:         l.MaxOpenFiles,
	}
}

// module returns the compiled module, compiling it on first use.
func (e *Engine) module(ctx context.Context, p *packs.Pack, m *packs.Module) (*host.Module, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if hm, ok := e.modules[m]; ok {
		return hm, nil
	}
	wasm, err := fs.ReadFile(p.FS, m.Path)
	if err != nil {
		return nil, fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err)
	}
	hm, err := e.host.Load(ctx, wasm, host.LoadOptions{Name: p.Name + "/" + m.Path, SHA256: m.SHA256})
	if err != nil {
		return nil, fmt.Errorf("pack %s module %s: %w", p.Name, m.Name, err)
	}
	e.modules[m] = hm
	return hm, nil
}

// Tools returns every tool, sorted by name.
func (e *Engine) Tools() []*Tool {
	out := make([]*Tool, 0, len(e.tools))
	for _, t := range e.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tool returns the tool called name.
func (e *Engine) Tool(name string) (*Tool, error) {
	t, ok := e.tools[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrToolNotFound, name)
	}
	return t, nil
}

// CallOptions adjust one call.
type CallOptions struct {
	// OnLog receives the guest's log entries as they are written.
	OnLog func(host.LogEntry)
}

// Result is a tool call's outcome: Output on success, Error when the tool
// failed (a failure is a result shown to the model, not a Go error).
type Result struct {
	Output  json.RawMessage
	IsError bool
	Error   *abi.Error
	Logs    []host.LogEntry
}

// Call runs the tool called name with args (a JSON object; empty means
// {}). A tool's own failure is reported in Result.Error with a nil error;
// an error is returned only when the call could not be made at all.
func (e *Engine) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	t, err := e.Tool(name)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, fmt.Errorf("%w: arguments for %q must be a JSON object: %v", ErrInvalidArguments, name, err)
	}
	hm, err := e.module(ctx, t.pk, t.mod)
	if err != nil {
		return nil, err
	}
	co := &host.CallOptions{Grant: t.Effective, Tools: e}
	if opts != nil {
		co.OnLog = opts.OnLog
	}
	res, err := hm.Call(ctx, t.Export, args, co)
	out := &Result{Logs: res.Logs}
	if err != nil {
		var ce *host.CallError
		if !errors.As(err, &ce) {
			return nil, err
		}
		out.IsError, out.Error = true, ce.ABIError()
		return out, nil
	}
	out.Output = json.RawMessage(res.Output)
	if !json.Valid(out.Output) {
		// The tool returned text; hand it on as a JSON string.
		b, _ := json.Marshal(string(res.Output))
		out.Output = b
	}
	return out, nil
}

// CallTool serves tool_call from guests: a guest may call the tools its
// grant names (the host checks that before calling here), through the same
// path as any other call. The called tool runs under its own effective
// grant, its pack's, never the caller's; and under the caller's context,
// so the caller's deadline and cancellation bound it besides its own
// timeout, and the nesting depth the host recorded in ctx carries on.
func (e *Engine) CallTool(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
	res, err := e.Call(ctx, name, args, nil)
	if err != nil {
		code := abi.CodeInternal
		switch {
		case errors.Is(err, ErrToolNotFound):
			code = abi.CodeNotFound
		case errors.Is(err, ErrInvalidArguments):
			code = abi.CodeInvalidInput
		}
		return abi.ToolResult{IsError: true, Error: &abi.Error{Code: code, Message: err.Error()}}
	}
	return abi.ToolResult{Output: res.Output, IsError: res.IsError, Error: res.Error}
}

// Close releases the engine's runtime and index.
func (e *Engine) Close(ctx context.Context) error {
	err := e.host.Close(ctx)
	if e.idx != nil {
		err = errors.Join(err, e.idx.Close())
	}
	return err
}

// Host returns the engine's Wasm host, for running modules outside packs.
func (e *Engine) Host() *host.Host { return e.host }
