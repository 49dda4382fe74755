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

// Config configures an Engine. The zero Config opens the bundled pack with
// the state dir .skillhost in the working directory.
type Config struct {
	// StateDir holds the compilation cache (StateDir/cache). Default
	// ".skillhost"; the env var SKILLHOST_STATE_DIR overrides the default.
	StateDir string
	// PackDirs are further pack folders, loaded after the bundled pack.
	PackDirs []string
	// NoBundled leaves the bundled pack out.
	NoBundled bool
	// Grants are the operator's grants, by pack name. A module runs under
	// the intersection of its request and its pack's grant. The bundled
	// pack, when it has no entry, is granted what it requests except
	// folders, network hosts and env vars, which only an operator can give.
	// Other packs without an entry get nothing.
	Grants map[string]Grant
	// DefaultLimits apply where neither manifest nor grant sets a limit.
	DefaultLimits Limits
}

// Engine holds loaded packs and runs their tools.
type Engine struct {
	cfg   Config
	host  *host.Host
	packs []*packs.Pack
	tools map[string]*Tool

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
	Module      string
	Export      string
	// InputSchema and OutputSchema are JSON Schemas, when declared.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Risk         string
	SideEffects  bool
	Idempotent   bool
	Hidden       bool
	Tags         []string
	// Requested is what the module asks for, Operator what the operator
	// grants its pack, and Effective their intersection: what it gets.
	Requested Grant
	Operator  Grant
	Effective Grant

	def *packs.Tool
	mod *packs.Module
	pk  *packs.Pack
}

// Open loads the configured packs. Modules are compiled on first use.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.StateDir == "" {
		cfg.StateDir = os.Getenv("SKILLHOST_STATE_DIR")
	}
	if cfg.StateDir == "" {
		cfg.StateDir = ".skillhost"
	}
	hc := host.NewConfig().WithCacheDir(filepath.Join(cfg.StateDir, "cache")).WithDefaultLimits(cfg.DefaultLimits)
	h, err := host.New(ctx, hc)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, host: h, tools: map[string]*Tool{}, modules: map[*packs.Module]*host.Module{}}
	if !cfg.NoBundled {
		p, err := packs.Bundled()
		if err != nil {
			h.Close(ctx)
			return nil, err
		}
		e.packs = append(e.packs, p)
	}
	for _, dir := range cfg.PackDirs {
		p, err := packs.Load(os.DirFS(dir), dir, "workspace")
		if err != nil {
			h.Close(ctx)
			return nil, err
		}
		e.packs = append(e.packs, p)
	}
	for _, p := range e.packs {
		for _, m := range p.Modules {
			if err := e.addTools(ctx, p, m); err != nil {
				h.Close(ctx)
				return nil, err
			}
		}
	}
	return e, nil
}

func (e *Engine) addTools(ctx context.Context, p *packs.Pack, m *packs.Module) error {
	defs := m.Tools
	if len(defs) == 0 {
		// The manifest lists no tools: ask the module.
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
			defs = append(defs, &packs.Tool{Name: td.Name, Export: export, Description: td.Description,
				InputSchema: td.InputSchema, OutputSchema: td.OutputSchema, Tags: td.Tags})
		}
	}
	req := requestGrant(m)
	op := e.operatorGrant(p, req)
	eff := host.Intersect(req, op)
	for _, d := range defs {
		if prev, ok := e.tools[d.Name]; ok {
			return fmt.Errorf("%w: %q is declared by pack %s module %s and by pack %s module %s",
				ErrDuplicateTool, d.Name, prev.Pack, prev.Module, p.Name, m.Name)
		}
		e.tools[d.Name] = &Tool{
			Name: d.Name, Description: d.Description, Pack: p.Name, PackVersion: p.Version, Source: p.Source,
			Module: m.Name, Export: d.Export, InputSchema: d.InputSchema, OutputSchema: d.OutputSchema,
			Risk: d.Risk(), SideEffects: d.SideEffects, Idempotent: d.Idempotent, Hidden: d.Hidden, Tags: d.Tags,
			Requested: req, Operator: op, Effective: eff, def: d, mod: m, pk: p,
		}
	}
	return nil
}

// requestGrant turns a manifest's request and limits into a Grant.
func requestGrant(m *packs.Module) Grant {
	r := m.Request
	g := Grant{
		AllowedHosts: r.AllowedHosts,
		Config:       r.Config,
		Tools:        r.Tools,
		Capabilities: r.Services,
		Limits: Limits{
			Timeout:              m.Limits.Timeout,
			MaxMemoryBytes:       m.Limits.MaxMemoryBytes,
			MaxOutputBytes:       m.Limits.MaxOutputBytes,
			MaxLogBytes:          m.Limits.MaxLogBytes,
			MaxVarBytes:          m.Limits.MaxVarBytes,
			MaxHTTPResponseBytes: m.Limits.MaxHTTPResponseBytes,
			MaxFuel:              m.Limits.MaxFuel,
		},
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

// operatorGrant returns the operator's grant for a pack.
func (e *Engine) operatorGrant(p *packs.Pack, req Grant) Grant {
	if g, ok := e.cfg.Grants[p.Name]; ok {
		return g
	}
	if p.Source == "bundled" {
		g := req
		g.Mounts, g.Env, g.AllowedHosts, g.AllowPrivateNetwork = nil, nil, nil, false
		g.Tools, g.Capabilities = append([]string(nil), req.Tools...), append([]string(nil), req.Capabilities...)
		return g
	}
	return Grant{}
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
// grant names, through the same path as any other call.
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

// Close releases the engine's runtime.
func (e *Engine) Close(ctx context.Context) error { return e.host.Close(ctx) }

// Host returns the engine's Wasm host, for running modules outside packs.
func (e *Engine) Host() *host.Host { return e.host }
