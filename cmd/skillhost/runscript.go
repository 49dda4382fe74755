package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/registry"
)

// runScriptFlags are run-script's own flags.
type runScriptFlags struct {
	args     []string
	argsJSON string
	stdin    bool
}

func newRunScriptCmd(g *globals) *cobra.Command {
	var rf runScriptFlags
	cmd := &cobra.Command{
		Use:   "run-script SKILL SCRIPT",
		Short: "Run a skill's script (a .wasm WASI command) with arguments",
		Long: `Run one of a skill's scripts as the run_skill_script tool does, and print
what it wrote to stdout; what it wrote to stderr goes to stderr. SCRIPT is
its path in the skill (scripts/x.wasm) or its file name (x.wasm).

A .wasm script runs as a WASI command module in the sandbox, under what the
skill asks for (env and capabilities in SKILL.md) and the operator grants
the skill's pack, with the operator's limits. Its arguments become flags:
--arg query=x gives --query x, a name given twice gives the flag twice,
--arg verbose (no =) gives the bare flag --verbose. --args takes the
arguments as a JSON object instead ({"query":"x","tag":["a","b"]}; false
and null are left out). Its stdin is empty unless --stdin passes this
command's.

Exit status: 0 when the script exited with 0; 1 when it failed (a non-zero
exit, a timeout, a trap; the message ends with the end of its stderr); 2
when the command line is wrong or no such skill or script exists.`,
		Example: `  skillhost run-script demo wordfreq.wasm --arg top=3 --stdin < notes.txt
  skillhost run-script demo scripts/wordfreq.wasm --args '{"top":3,"lower":true}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("run-script needs a SKILL and a SCRIPT (see skillhost run-script --help)")
			}
			return runScript(cmd.Context(), g, &rf, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&rf.args, "arg", nil, "an argument `NAME=VALUE` (a string), or NAME alone for true; repeatable")
	f.StringVar(&rf.argsJSON, "args", "", "the arguments as a JSON `OBJECT`, in place of --arg")
	f.BoolVar(&rf.stdin, "stdin", false, "pass this command's stdin to the script")
	f.BoolVar(&g.callJSON, "json", false, `print the result or the error as JSON on stdout: {output, is_error, error}`)
	return cmd
}

// scriptArgs builds the arguments object of --arg flags: NAME=VALUE is a
// string (a name given again makes a list), NAME alone is true.
func scriptArgs(flags []string) (map[string]any, error) {
	out := map[string]any{}
	for _, a := range flags {
		name, value, hasValue := strings.Cut(a, "=")
		if name == "" {
			return nil, usageErr("--arg %q has no name: give NAME=VALUE or NAME", a)
		}
		var v any = true
		if hasValue {
			v = value
		}
		switch prev := out[name].(type) {
		case nil:
			out[name] = v
		case []any:
			out[name] = append(prev, v)
		default:
			out[name] = []any{prev, v}
		}
	}
	return out, nil
}

func runScript(ctx context.Context, g *globals, rf *runScriptFlags, skill, script string) error {
	in := map[string]any{"skill_name": skill, "script_name": script}
	switch {
	case rf.argsJSON != "" && len(rf.args) > 0:
		return usageErr("give the arguments with --arg or with --args, not both")
	case rf.argsJSON != "":
		var obj map[string]any
		if err := json.Unmarshal([]byte(rf.argsJSON), &obj); err != nil || obj == nil {
			return usageErr("--args must be a JSON object such as '{\"query\":\"x\"}'")
		}
		in["args"] = json.RawMessage(rf.argsJSON)
	default:
		a, err := scriptArgs(rf.args)
		if err != nil {
			return err
		}
		in["args"] = a
	}
	if rf.stdin {
		b, err := readAll(g.stdin)
		if err != nil {
			return usageErr("reading stdin: %v", err)
		}
		in["stdin"] = string(b)
	}
	// One script run: each module is compiled only as it runs (see
	// skillhost.Config.OneCall).
	e, err := openEngine(ctx, g, func(cfg *skillhost.Config) { cfg.NoIndex, cfg.OneCall = true, true })
	if err != nil {
		return err
	}
	defer e.Close(ctx)
	res, err := e.Call(ctx, registry.RunSkillScriptName, mustJSON(in), nil)
	if err != nil {
		exit, kind := hostErrKind(err)
		return callErr(exit, skill, kind, "%s", message(err))
	}
	if g.callJSON {
		fmt.Fprintln(g.stdout, string(mustJSON(callJSON{Output: res.Output, IsError: res.IsError, Error: res.Error})))
		if res.IsError {
			return &exitError{code: exitToolError, printed: true}
		}
		return nil
	}
	if res.IsError {
		code := exitToolError
		if res.Error.Code == "not_found" {
			code = exitUsage
		}
		return callErr(code, skill+" "+script, string(res.Error.Code), "%s", res.Error.Message)
	}
	var out struct {
		Output json.RawMessage `json:"output"`
		Stderr string          `json:"stderr"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		return callErr(exitToolError, skill+" "+script, "internal", "reading the script's result: %v", err)
	}
	var text string
	if json.Unmarshal(out.Output, &text) == nil {
		fmt.Fprint(g.stdout, text)
	} else {
		fmt.Fprintln(g.stdout, string(out.Output))
	}
	fmt.Fprint(g.stderr, out.Stderr)
	return nil
}
