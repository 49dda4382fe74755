package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

func newCallCmd(g *globals) *cobra.Command {
	var (
		gf      grantFlags
		module  string
		export  string
		input   string
		asJSON  bool
		inputOK bool
	)
	cmd := &cobra.Command{
		Use:   "call NAME [JSON|-]",
		Short: "Call a tool with JSON arguments, or an export of a module file",
		Long: `Call a tool of the loaded packs with JSON arguments (an object; "-" reads
them from stdin) and print its output. The tool runs under the intersection of
what its pack requests and what the operator grants; the grant flags add to
the operator's grant.

With --module, call an export of a .wasm file directly, as an operator trying
a downloaded module before packing it: the module gets exactly what the flags
grant, its output bytes go to stdout as the guest set them, and its error to
stderr.

Exit status: 0 on success, 1 when the tool reports an error (including traps,
timeouts, limits and denied capabilities), 2 on usage or load errors.`,
		Example: `  skillhost call slugify '{"text":"Hello, World!"}'
  echo '{"text":"From stdin"}' | skillhost call slugify -
  skillhost call --module plugin.wasm --export count_vowels --input "Hello"
  skillhost call --module fetch.wasm --export fetch --allow-host api.example.com --input '{"url":"https://api.example.com/"}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			inputOK = cmd.Flags().Changed("input")
			if module != "" {
				if len(args) > 0 {
					return usageErr("with --module, give the input with --input, not as arguments")
				}
				if export == "" {
					return usageErr("--module needs --export FUNC")
				}
				return callModule(cmd.Context(), g, &gf, module, export, input, inputOK)
			}
			if export != "" || inputOK {
				return usageErr("--export and --input go with --module")
			}
			if len(args) < 1 || len(args) > 2 {
				return usageErr("call needs a tool NAME and optional JSON arguments (see skillhost call --help)")
			}
			var raw []byte
			if len(args) == 2 {
				var err error
				if raw, err = readArg(g, args[1]); err != nil {
					return err
				}
			}
			return callTool(cmd.Context(), g, &gf, args[0], raw, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&module, "module", "", "call an export of this .wasm file instead of a pack tool")
	f.StringVar(&export, "export", "", "with --module: the export to call")
	f.StringVar(&input, "input", "", `with --module: the input bytes ("-" reads stdin)`)
	f.BoolVar(&asJSON, "json", false, "print the whole result as JSON: {output, is_error, error}")
	gf.register(f)
	return cmd
}

func readArg(g *globals, arg string) ([]byte, error) {
	if arg != "-" {
		return []byte(arg), nil
	}
	b, err := io.ReadAll(g.stdin)
	if err != nil {
		return nil, usageErr("reading stdin: %v", err)
	}
	return b, nil
}

// openEngineFunc opens an engine; tests count the calls.
var openEngineFunc = skillhost.Open

// openEngine opens the engine of the global flags; adjust, when set,
// changes the Config first.
func openEngine(ctx context.Context, g *globals, adjust func(*skillhost.Config)) (*skillhost.Engine, error) {
	cfg := skillhost.Config{ConfigFile: g.config, StateDir: g.stateDir, PackDirs: g.packDirs, NoBundled: g.noBundle, NoUserSources: g.noUser}
	if adjust != nil {
		adjust(&cfg)
	}
	e, err := openEngineFunc(ctx, cfg)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if p := e.Problems(); len(p) > 0 && !g.quiet {
		for _, err := range p {
			fmt.Fprintf(g.stderr, "skillhost: warning: %v\n", err)
		}
		fmt.Fprintf(g.stderr, "skillhost: warning: %d problem(s) loading skills and packs; the rest loaded (skillhost validate PATH lists them)\n", len(p))
		g.quiet = true
	}
	return e, nil
}

func callTool(ctx context.Context, g *globals, gf *grantFlags, name string, args []byte, asJSON bool) error {
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
	// A call needs no discovery index: the engine is opened once, without
	// it, and the grant flags are added to the operator's grant of the
	// tool's pack as the registry is built.
	e, err := openEngine(ctx, g, func(cfg *skillhost.Config) {
		cfg.NoIndex = true
		if extra == nil {
			return
		}
		cfg.GrantsFor = func(tools []*skillhost.Tool) map[string]skillhost.Grant {
			for _, t := range tools {
				if t.Name == name && t.Pack != "" {
					return map[string]skillhost.Grant{t.Pack: merge(t.Operator, *extra)}
				}
			}
			return nil
		}
	})
	if err != nil {
		return err
	}
	defer e.Close(ctx)
	if _, err := e.Tool(name); err != nil {
		return usageErr("%v; run skillhost list to see the tools", err)
	}
	args = bytes.TrimSpace(args)
	if len(args) > 0 && (!json.Valid(args) || args[0] != '{') {
		// A person typed it: a usage error, not a tool error.
		return usageErr("the arguments of %s must be a JSON object, such as '{\"text\":\"hello\"}'; got %.40q", name, args)
	}
	res, err := e.Call(ctx, name, args, &skillhost.CallOptions{OnLog: logPrinter(g, level)})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			Output  json.RawMessage `json:"output,omitempty"`
			IsError bool            `json:"is_error"`
			Error   any             `json:"error,omitempty"`
		}{res.Output, res.IsError, res.Error})
		fmt.Fprintln(g.stdout, string(b))
		if res.IsError {
			return &exitError{code: exitToolError}
		}
		return nil
	}
	if res.IsError {
		return &exitError{code: exitToolError, err: fmt.Errorf("%s: %s: %s", name, res.Error.Code, res.Error.Message)}
	}
	fmt.Fprintln(g.stdout, string(res.Output))
	return nil
}

func callModule(ctx context.Context, g *globals, gf *grantFlags, file, export, input string, inputSet bool) error {
	level, err := gf.level()
	if err != nil {
		return err
	}
	grant, err := gf.grant()
	if err != nil {
		return err
	}
	var in []byte
	if inputSet {
		if in, err = readArg(g, input); err != nil {
			return err
		}
	}
	wasm, err := os.ReadFile(file)
	if err != nil {
		return usageErr("reading module: %v", err)
	}
	dir, err := stateDirOf(g)
	if err != nil {
		return err
	}
	h, err := host.New(ctx, host.NewConfig().WithCacheDir(filepath.Join(dir, "cache")).WithLogLevel(level))
	if err != nil {
		return usageErr("%v", err)
	}
	defer h.Close(ctx)
	m, err := h.Load(ctx, wasm, host.LoadOptions{Name: filepath.Base(file)})
	if err != nil {
		return usageErr("%v", err)
	}
	res, err := m.Call(ctx, export, in, &host.CallOptions{Grant: grant, OnLog: logPrinter(g, level)})
	if err != nil {
		if errors.Is(err, host.ErrExportNotFound) {
			exports := m.Exports()
			sort.Strings(exports)
			return usageErr("%v; the module exports %v", err, exports)
		}
		var ce *host.CallError
		if errors.As(err, &ce) {
			if ce.Guest != nil {
				fmt.Fprintln(g.stderr, ce.Guest.Message)
				return &exitError{code: exitToolError}
			}
			return &exitError{code: exitToolError, err: err}
		}
		return usageErr("%v", err)
	}
	_, err = g.stdout.Write(res.Output)
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
