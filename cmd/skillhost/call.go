package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// callFlags are call's own flags.
type callFlags struct {
	gf       grantFlags
	module   string
	export   string
	input    string
	inputSet bool
	stdin    bool
	dryRun   bool
}

func newCallCmd(g *globals) *cobra.Command {
	var cf callFlags
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON|-]",
		Short: "Call a tool with JSON arguments, or an export of a module file",
		Long: `Call a tool of the loaded packs with JSON arguments (an object) and print its
output. The arguments are the JSON argument, else --input, else stdin when it
is not a terminal ("-" or --stdin read stdin in any case). An empty argument
('') is an explicit empty input: the tool gets {}.

The tool runs under the intersection of what its pack requests and what the
operator grants; the grant flags add to the operator's grant of the tool's
pack, and its limits are its pack's (skillhost show TOOL shows them, and
call TOOL --dry-run shows what a call would run with). The defaults named
by the limit flags apply to --module calls only.

With --module, call an export of a .wasm file directly, as an operator trying
a downloaded module before packing it: the module gets exactly what the flags
grant, its input is --input (else stdin when it is not a terminal), its
output bytes go to stdout as the guest set them.

A failure is printed on stderr as "skillhost: TOOL: CODE: message"; with
--json the result or the error is a JSON object on stdout:
{"output":…,"is_error":false} or {"is_error":true,"error":{"code":…,"message":…}}.

Exit status: 0 on success; 1 when the tool failed (its error, a trap, a
timeout, a limit, a refused capability) or its arguments were refused; 2
when the command line is wrong (a flag, an unknown tool or export) or a
config, pack or module does not load.`,
		Example: `  skillhost call slugify '{"text":"Hello, World!"}'
  echo '{"text":"From stdin"}' | skillhost call slugify
  skillhost call word_count --input '{"text":"one two three"}' --json
  skillhost call slugify --dry-run --timeout 2s
  skillhost call --module plugin.wasm --export count_vowels --input "Hello"
  skillhost call --module fetch.wasm --export fetch --allow-host api.example.com --input '{"url":"https://api.example.com/"}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cf.inputSet = cmd.Flags().Changed("input")
			if cf.module != "" {
				if len(args) > 0 {
					return usageErr("with --module, give the input with --input or on stdin, not as an argument")
				}
				if cf.export == "" {
					return usageErr("--module needs --export FUNC, the export to call")
				}
				if cf.dryRun {
					return usageErr("--dry-run goes with a pack TOOL; a --module call runs with exactly the flags' grant and the default limits")
				}
				return callModule(cmd.Context(), g, &cf)
			}
			if cf.export != "" {
				return usageErr("--export goes with --module")
			}
			if len(args) < 1 || len(args) > 2 {
				return usageErr("call needs a TOOL and optional JSON arguments (see skillhost call --help)")
			}
			return callTool(cmd.Context(), g, &cf, args[0], args[1:])
		},
	}
	f := cmd.Flags()
	f.StringVar(&cf.module, "module", "", "call an export of this .wasm `FILE` instead of a pack tool")
	f.StringVar(&cf.export, "export", "", "with --module: the export `FUNC` to call")
	f.StringVarP(&cf.input, "input", "i", "", "the input `TEXT`: a pack tool's JSON arguments, a module's bytes (\"-\" reads stdin, '' is empty)")
	f.BoolVar(&cf.stdin, "stdin", false, "read the input from stdin")
	f.BoolVar(&g.callJSON, "json", false, `print the result or the error as JSON on stdout: {output, is_error, error}`)
	f.BoolVar(&cf.dryRun, "dry-run", false, "print the grant and limits the call would run with, and call nothing")
	cf.gf.register(f)
	return cmd
}

// readInput returns the input of a call: the positional argument, else
// --input, else stdin when asked ("-", --stdin) or when it is not a
// terminal. given reports whether any input was given or read.
func readInput(g *globals, cf *callFlags, positional []string, readStdinIfPiped bool) (in []byte, given bool, err error) {
	n := len(positional)
	if cf.inputSet {
		n++
	}
	if cf.stdin {
		n++
	}
	if n > 1 {
		return nil, false, usageErr("give the input once: as an argument, with --input or with --stdin")
	}
	var text *string
	switch {
	case len(positional) == 1:
		text = &positional[0]
	case cf.inputSet:
		text = &cf.input
	}
	switch {
	case text != nil && *text != "-":
		return []byte(*text), true, nil
	case text != nil, cf.stdin, readStdinIfPiped && !isTerminal(g.stdin):
		b, err := readAll(g.stdin)
		if err != nil {
			return nil, false, usageErr("reading stdin: %v", err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// openEngineFunc opens an engine; tests count the calls.
var openEngineFunc = skillhost.Open

// openEngine opens the engine of the global flags; adjust, when set,
// changes the Config first.
func openEngine(ctx context.Context, g *globals, adjust func(*skillhost.Config)) (*skillhost.Engine, error) {
	in, err := g.installer()
	if err != nil {
		return nil, err
	}
	cfg := skillhost.Config{ConfigFile: g.configFile, StateDir: g.stateDir, PackDirs: g.packDirs, NoBundled: g.noBundle, NoUserSources: g.noUser,
		InstalledDir: in.Dir, CheckSources: func(context.Context) error { return g.checkInstalled(in) }}
	if adjust != nil {
		adjust(&cfg)
	}
	if err := g.restrictUnknownSigners(in, &cfg); err != nil {
		return nil, err
	}
	e, err := openEngineFunc(ctx, cfg)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if p := e.Problems(); len(p) > 0 && !g.quiet {
		for _, err := range p {
			fmt.Fprintf(g.stderr, "skillhost: warning: %s\n", message(err))
		}
		fmt.Fprintf(g.stderr, "skillhost: warning: %d problem(s) loading skills and packs; the rest loaded (skillhost validate PATH lists them)\n", len(p))
		g.quiet = true
	}
	return e, nil
}

// openReadOnly opens the engine of a command that only reads, such as
// list and show: it compiles nothing into the compilation cache, and its
// discovery index (which the built-in search tools need to exist) is a
// throwaway one in a temporary folder, removed by done. It creates nothing
// in the state folders.
func openReadOnly(ctx context.Context, g *globals) (e *skillhost.Engine, done func(), err error) {
	tmp, err := os.MkdirTemp("", "skillhost-read-")
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	e, err = openEngine(ctx, g, func(cfg *skillhost.Config) {
		cfg.NoCache = true
		cfg.IndexPath = filepath.Join(tmp, "index.db")
	})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	return e, func() {
		e.Close(ctx)
		os.RemoveAll(tmp)
	}, nil
}

func callTool(ctx context.Context, g *globals, cf *callFlags, name string, positional []string) error {
	gf := &cf.gf
	gf.warnRenamed(g.stderr)
	level, err := gf.level()
	if err != nil {
		return err
	}
	var extra *skillhost.Grant
	if gf.set() {
		x, err := gf.grant()
		if err != nil {
			return err
		}
		extra = &x
	}
	// A call needs no discovery index unless it calls a search tool: the
	// engine is opened once, without it, and the grant flags are added to the operator's grant of the
	// tool's pack as the registry is built. A dry run compiles nothing, so
	// it needs no cache either.
	e, err := openEngine(ctx, g, func(cfg *skillhost.Config) {
		cfg.NoIndex = !registry.UsesIndex(name)
		// A call names its tool: one of the search family gets that family.
		if slices.Contains(registry.SkillToolNames(registry.SkillToolsSearch), name) {
			cfg.Skills.Tools = registry.SkillToolsSearch
		}
		cfg.NoCache = cf.dryRun
		// One call: each module is compiled only as that call runs it,
		// with the tick check unless the flags set a fuel limit.
		cfg.OneCall = true
		cfg.CountAllFuel = extra != nil && extra.Limits.MaxFuel > 0
		if extra == nil {
			return
		}
		cfg.GrantFor = func(pack string, tools []string, op skillhost.Grant) (skillhost.Grant, bool) {
			if !slices.Contains(tools, name) {
				return op, false
			}
			return merge(op, *extra), true
		}
	})
	if err != nil {
		return err
	}
	defer e.Close(ctx)
	t, err := e.Tool(name)
	if err != nil {
		return unknownTool(e, name)
	}
	if extra != nil && t.Kind != registry.KindWasm {
		return usageErr("%s is a %s tool: the grant and limit flags apply to the Wasm tools of packs", name, t.Kind)
	}
	args, given, err := readInput(g, cf, positional, !cf.dryRun)
	if err != nil {
		return err
	}
	if err := checkJSONArgs(name, args); err != nil {
		return err
	}
	if cf.dryRun {
		return dryRun(g, t, args, given)
	}
	if g.stderrTTY {
		preload(ctx, g, e, t)
	}
	res, err := e.Call(ctx, name, args, &skillhost.CallOptions{OnLog: logPrinter(g, level)})
	if err != nil {
		exit, kind := hostErrKind(err)
		return callErr(exit, name, kind, "%s", message(err))
	}
	if g.callJSON {
		fmt.Fprintln(g.stdout, string(mustJSON(callJSON{Output: res.Output, IsError: res.IsError, Error: res.Error})))
		if res.IsError {
			return &exitError{code: exitToolError, printed: true}
		}
		return nil
	}
	if res.IsError {
		return callErr(exitToolError, name, string(res.Error.Code), "%s", res.Error.Message)
	}
	fmt.Fprintln(g.stdout, string(res.Output))
	return nil
}

// checkJSONArgs refuses arguments that are not a JSON object, as the
// registry would, but phrased for a person at a terminal.
func checkJSONArgs(name string, args []byte) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return nil
	}
	const example = `'{"text":"hello"}'`
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return callErr(exitToolError, name, string(abi.CodeInvalidInput),
				"the arguments are not valid JSON: %s at byte %d; give a JSON object such as %s", se.Error(), se.Offset, example)
		}
		return callErr(exitToolError, name, string(abi.CodeInvalidInput), "the arguments are not valid JSON; give a JSON object such as %s", example)
	}
	if _, ok := v.(map[string]any); !ok {
		return callErr(exitToolError, name, string(abi.CodeInvalidInput), "the arguments must be a JSON object such as %s, not %s", example, jsonKind(v))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a JSON value"
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// unknownTool is the error for a name that is no tool: with the closest
// tool names, or, for a skill's name, how to see the skill.
func unknownTool(e *skillhost.Engine, name string) error {
	if se, _, err := findSkill(e, name); err == nil {
		return callErr(exitUsage, name, string(abi.CodeNotFound), "%s is a skill, not a tool: skillhost show %s shows it", name, se.Skill.Name)
	}
	var names []string
	for _, t := range e.Tools() {
		names = append(names, t.Name)
	}
	return callErr(exitUsage, name, string(abi.CodeNotFound), "no tool is called %q%s (skillhost list shows every tool)", name, didYouMean(name, names))
}

// preload compiles the module of a Wasm tool before its call, showing
// progress while it does; the call then finds it compiled.
func preload(ctx context.Context, g *globals, e *skillhost.Engine, t *skillhost.Tool) {
	if t.Kind != registry.KindWasm || e.Host() == nil {
		return
	}
	for _, p := range e.Catalog().Packs() {
		if p.Name != t.Pack || p.FS == nil {
			continue
		}
		for _, m := range p.Modules {
			if m.Name != t.Module {
				continue
			}
			wasm, err := fs.ReadFile(p.FS, m.Path)
			if err != nil {
				return // the call reports it
			}
			done := g.compiling(p.Name+"/"+m.Path, len(wasm))
			e.Host().Load(ctx, wasm, host.LoadOptions{Name: p.Name + "/" + m.Path, SHA256: m.SHA256, Once: true})
			done()
			return
		}
	}
}

// dryRun prints what a call of t would run with: the effective grant,
// limits and isolation, and whether the arguments are a JSON object.
func dryRun(g *globals, t *skillhost.Tool, args []byte, given bool) error {
	if g.callJSON {
		return printToolJSON(g, t)
	}
	w := g.stdout
	fmt.Fprintf(w, "%s would run (dry run: nothing was called)\n", t.Name)
	if t.Kind != registry.KindWasm {
		fmt.Fprintf(w, "\n  a %s tool: it runs in the host, without a grant or limits\n", t.Kind)
	} else {
		fmt.Fprintf(w, "\n  pack:    %s %s (%s)\n  module:  %s, export %s\n", t.Pack, t.PackVersion, t.Source, t.Module, t.Export)
	}
	switch {
	case given && len(bytes.TrimSpace(args)) > 0:
		fmt.Fprintf(w, "  input:   a JSON object of %d bytes (checked against the input schema when called)\n", len(args))
	default:
		fmt.Fprintf(w, "  input:   {}\n")
	}
	if t.Kind != registry.KindWasm {
		return nil
	}
	fmt.Fprintf(w, "\n  grant (%s):\n%s", grantFrom(t), describeGrant(t.Effective, toolsNote(t)))
	fmt.Fprintf(w, "\n  limits:\n%s", describeLimits(t))
	fmt.Fprintf(w, "\n  isolation: %s (%s)\n", t.Isolation, isolationFrom(t))
	return nil
}

func callModule(ctx context.Context, g *globals, cf *callFlags) error {
	gf := &cf.gf
	gf.warnRenamed(g.stderr)
	level, err := gf.level()
	if err != nil {
		return err
	}
	grant, err := gf.grant()
	if err != nil {
		return err
	}
	in, _, err := readInput(g, cf, nil, true)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(cf.module)
	if err != nil {
		return usageErr("reading module %s: %v", cf.module, pathErr(err))
	}
	cache, err := moduleCacheDir(g, true)
	if err != nil {
		return err
	}
	// One call: the host compiles only the module it runs (see
	// host.LoadOptions.Once), with the tick check unless the call has a
	// fuel limit, which only the module that counts fuel can keep.
	cfg := host.NewConfig().WithCacheDir(cache).WithLogLevel(level).WithTickCheck(grant.Limits.MaxFuel == 0)
	h, err := host.New(ctx, cfg)
	if err != nil {
		return usageErr("%s", message(err))
	}
	defer h.Close(ctx)
	name := filepath.Base(cf.module)
	done := g.compiling(name, len(wasm))
	m, err := h.Load(ctx, wasm, host.LoadOptions{Name: name, Once: true})
	done()
	if err != nil {
		return callErr(exitUsage, cf.export, codeUnavailable, "%s", message(err))
	}
	res, err := m.Call(ctx, cf.export, in, &host.CallOptions{Grant: grant, OnLog: logPrinter(g, level)})
	if err != nil {
		if errors.Is(err, host.ErrExportNotFound) {
			exports := m.Exports()
			sort.Strings(exports)
			return callErr(exitUsage, cf.export, string(abi.CodeNotFound), "%s has no export %q; it exports %s%s",
				name, cf.export, strings.Join(exports, ", "), didYouMean(cf.export, exports))
		}
		var ce *host.CallError
		if errors.As(err, &ce) {
			ae := ce.ABIError()
			msg := ae.Message
			// A command module's exports trap before its runtime exists:
			// say which flag builds the module the host can call.
			if errors.Is(err, host.ErrTrap) {
				if cerr := packs.CheckModule(&packs.Module{Name: name, Path: name, Tools: []*packs.ToolSpec{{Name: cf.export, Export: cf.export}}}, wasm); errors.Is(cerr, packs.ErrModule) {
					msg += "; " + message(cerr)
				}
			}
			return callErr(exitToolError, cf.export, string(ae.Code), "%s", msg)
		}
		exit, kind := hostErrKind(err)
		return callErr(exit, cf.export, kind, "%s", message(err))
	}
	if g.callJSON {
		v := callJSON{}
		moduleOutputJSON(&v, res.Output)
		writeJSONResult(g.stdout, v)
		return nil
	}
	_, err = g.stdout.Write(res.Output)
	return err
}

// pathErr is an *fs.PathError's reason: the path is already named.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// logPrinter prints guest log entries at or above level to stderr.
func logPrinter(g *globals, min abi.LogLevel) func(host.LogEntry) {
	return func(e host.LogEntry) {
		if e.Level < min {
			return
		}
		if e.Source == "log" {
			fmt.Fprintf(g.stderr, "[%s] %s\n", e.Level, e.Message)
			return
		}
		fmt.Fprintf(g.stderr, "[%s] %s", e.Source, e.Message)
	}
}
