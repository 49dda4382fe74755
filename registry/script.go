package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

// MaxScriptBytes bounds the size of a skill's .wasm script.
const MaxScriptBytes = 64 << 20

// stderrTail is how much of a failed script's stderr its error carries.
const stderrTail = 2000

// runsWasmScripts reports whether the run can run a skill's .wasm scripts:
// its registry has a host.
func (run *Run) runsWasmScripts() bool {
	return run != nil && run.reg != nil && run.reg.opts.Host != nil
}

// runFileScript runs a script a file skill brings: a .wasm file under
// scripts/ runs as a WASI command module (see host.Module.RunCommand),
// with args turned into flags (ScriptFlags) and stdin, under the skill's
// grant (scriptGrant). Its stdout is the output; a non-zero exit or a
// timeout is a "script failed" error carrying the end of its stderr.
func (set *SkillSet) runFileScript(ctx context.Context, run *Run, s skillRef, name string, args json.RawMessage, stdin *string) (any, error) {
	sk := s.file.Skill
	have := fileScripts(sk)
	var res *packs.Resource
	if clean, err := cleanResourcePath(name); err == nil {
		for i := range sk.Resources {
			if p := sk.Resources[i].Path; slices.Contains(have, p) && (p == clean || p == scriptsDir+clean) {
				res = &sk.Resources[i]
			}
		}
	}
	if res == nil {
		return nil, scriptNotFound(s.name, name, have)
	}
	if path.Ext(res.Path) != ".wasm" {
		return nil, builtinError(abi.CodeUnavailable, "script cannot run: %q of skill %q is not a WebAssembly module, and skillhost runs no native scripts; "+
			"a skill's scripts run as .wasm WASI command modules (or as Go functions registered with the skill). "+
			"Read it with read_skill_resource, or follow the skill's instructions without it", res.Path, s.name)
	}
	if !run.runsWasmScripts() {
		return nil, builtinError(abi.CodeUnavailable, "script cannot run: %q of skill %q is a WebAssembly module and this registry has no host to run it", res.Path, s.name)
	}
	if res.Size > MaxScriptBytes {
		return nil, builtinError(abi.CodeLimitExceeded, "script cannot run: %q of skill %q holds %d bytes; scripts may hold at most %d", res.Path, s.name, res.Size, MaxScriptBytes)
	}
	argv, err := ScriptFlags(args)
	if err != nil {
		return nil, builtinError(abi.CodeInvalidInput, "arguments for script %q of skill %q: %v", res.Path, s.name, err)
	}
	wasm, err := set.readListed(s, res)
	if err != nil {
		return nil, err
	}
	r := run.reg
	hm, err := r.opts.Host.Load(ctx, wasm, host.LoadOptions{Name: s.name + "/" + res.Path, Once: r.opts.OneCall})
	if err != nil {
		return nil, builtinError(abi.CodeUnavailable, "script cannot run: %q of skill %q: %v", res.Path, s.name, err)
	}
	if !hm.IsCommand() {
		return nil, builtinError(abi.CodeUnavailable, "script cannot run: %q of skill %q is not a WASI command module (it has no _start export); "+
			"build it as a program: for Go, without -buildmode=c-shared (GOOS=wasip1 GOARCH=wasm go build -o %s .)", res.Path, s.name, path.Base(res.Path))
	}
	opts := &host.CommandOptions{Grant: r.scriptGrant(sk), Args: argv, Tools: dispatcher{run}}
	if stdin != nil {
		opts.Stdin = []byte(*stdin)
	}
	scriptName := strings.TrimSuffix(path.Base(res.Path), ".wasm")
	cr, err := hm.RunCommand(ctx, scriptName, opts)
	if err != nil {
		var ce *host.CallError
		if !errors.As(err, &ce) {
			return nil, builtinError(abi.CodeInternal, "script failed: script %q of skill %q: %v", res.Path, s.name, err)
		}
		msg := ce.Message
		if errors.Is(err, host.ErrGuest) {
			msg = fmt.Sprintf("exited with code %d", cr.ExitCode)
		}
		if tail := tailText(cr.Stderr, stderrTail); tail != "" {
			msg += "; stderr ends: " + tail
		}
		return nil, builtinError(ce.Code, "script failed: script %q of skill %q %s", res.Path, s.name, msg)
	}
	out, err := json.Marshal(strings.ToValidUTF8(string(cr.Stdout), "\uFFFD"))
	if err != nil {
		return nil, builtinError(abi.CodeInternal, "script failed: script %q of skill %q: encoding its stdout: %v", res.Path, s.name, err)
	}
	return scriptOutput{SkillName: s.name, ScriptName: res.Path, Output: out,
		Stderr: strings.ToValidUTF8(string(cr.Stderr), "\uFFFD"), Truncated: cr.StdoutTruncated || cr.StderrTruncated}, nil
}

// tailText returns the last n bytes of b, starting at a whole UTF-8
// character, trimmed.
func tailText(b []byte, n int) string {
	cut := false
	if len(b) > n {
		b, cut = b[len(b)-n:], true
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if cut && s != "" {
		s = "…" + s
	}
	return s
}

var flagNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ScriptFlags turns a script's arguments object into command-line flags,
// in the order of the names: {"query": "x"} gives --query x, a list
// repeats the flag once per item, true gives the bare flag, false and
// null are left out, a number is written as in the JSON text, and an
// object (or a list inside a list) is passed as its JSON text. A name must
// be a flag name: letters, digits, '_', '.' and '-', not starting with
// '-', at most 64 characters. Empty input reads as no arguments.
func ScriptFlags(args json.RawMessage) ([]string, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("must be a JSON object of flag names to values: %v", err)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		if !flagNameRe.MatchString(k) {
			return nil, fmt.Errorf("%q cannot be a flag name: use letters, digits, '_', '.' and '-', not starting with '-', at most 64 characters", k)
		}
		names = append(names, k)
	}
	slices.Sort(names)
	var out []string
	for _, k := range names {
		flag := "--" + k
		switch v := m[k].(type) {
		case []any:
			for _, item := range v {
				out = appendFlag(out, flag, item)
			}
		default:
			out = appendFlag(out, flag, v)
		}
	}
	return out, nil
}

func appendFlag(out []string, flag string, v any) []string {
	switch x := v.(type) {
	case nil:
		return out
	case bool:
		if x {
			return append(out, flag)
		}
		return out
	case string:
		return append(out, flag, x)
	case json.Number:
		return append(out, flag, x.String())
	default:
		b, _ := json.Marshal(x)
		return append(out, flag, string(b))
	}
}

// scriptGrant is the grant a file skill's scripts run under: what the
// skill asks for (its env names and capabilities, from SKILL.md)
// intersected with what the operator grants the skill's pack, with the
// operator's limits. Nothing else: no folder, no host.
func (r *Registry) scriptGrant(sk *packs.SkillSpec) host.Grant {
	var req host.Grant
	if sa := sk.Subagent; sa != nil {
		req.Capabilities = sa.Capabilities
		if len(sa.Env) > 0 {
			req.Env = map[string]string{}
			for _, name := range sa.Env {
				req.Env[name] = ""
			}
		}
	}
	op, _ := r.grants.operatorGrant(&packs.Pack{Name: sk.Pack}, &packs.Module{})
	op.Limits = r.grants.resolve(op.Limits)
	return host.Intersect(req, op)
}
