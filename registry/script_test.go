package registry_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/registry"
)

// The conversion of a script's arguments into flags.
func TestScriptFlags(t *testing.T) {
	tests := []struct {
		args string
		want []string
	}{
		{`{"query": "x"}`, []string{"--query", "x"}},
		{`{"tag": ["a", "b"]}`, []string{"--tag", "a", "--tag", "b"}},
		{`{"verbose": true}`, []string{"--verbose"}},
		{`{"quiet": false, "none": null}`, nil},
		{`{"n": 10, "ratio": 0.5, "big": 1e400}`, []string{"--big", "1e400", "--n", "10", "--ratio", "0.5"}},
		{`{"filter": {"a": 1}}`, []string{"--filter", `{"a":1}`}},
		{`{"m": [[1, 2], true, false, null, "s"]}`, []string{"--m", "[1,2]", "--m", "--m", "s"}},
		{`{"b": "2", "a": "1"}`, []string{"--a", "1", "--b", "2"}},
		{`{"empty": ""}`, []string{"--empty", ""}},
		{`{"value": "--not-a-flag"}`, []string{"--value", "--not-a-flag"}},
		{``, nil},
		{`null`, nil},
		{`{}`, nil},
	}
	for _, tt := range tests {
		got, err := registry.ScriptFlags(json.RawMessage(tt.args))
		if err != nil {
			t.Errorf("%s: %v", tt.args, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.args, d)
		}
	}
	for _, bad := range []string{`{"-x": 1}`, `{"a b": 1}`, `{"": 1}`, `{"a=b": 1}`, `[1]`, `"x"`, `{"a":`} {
		if got, err := registry.ScriptFlags(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: flags %q, want an error", bad, got)
		}
	}
}

// scriptEnv is a registry with the skill tools over one file skill, demo,
// in the pack sk, whose scripts are the goscript command fixture, a
// reactor module and a shell script.
func scriptEnv(t *testing.T, grants map[string]host.Grant) *registry.Run {
	t.Helper()
	// The source's folder, sk, names the pack of the skills in it.
	dir := filepath.Join(t.TempDir(), "sk")
	skill := filepath.Join(dir, "demo")
	if err := os.MkdirAll(filepath.Join(skill, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{"go/goscript/goscript.wasm": "goscript.wasm", "wat/echo.wasm": "reactor.wasm"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "guests", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(skill, "scripts", to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(skill, "scripts", "run.sh"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: demo\ndescription: A skill with scripts.\nenv: [TOKEN]\n---\nRun the scripts.\n"
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := catalog(t, dir)
	set, err := registry.NewSkillSet(registry.SkillSetOptions{Files: cat.Skills})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(context.Background(), cat, registry.Options{Host: newHost(t), Grants: grants,
		Builtins: registry.Builtins(registry.BuiltinOptions{Skills: set})})
	if err != nil {
		t.Fatal(err)
	}
	return newRun(t, reg, registry.RunContext{}, nil)
}

type scriptAnswer struct {
	Output    string `json:"output"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

func runScript(t *testing.T, run *registry.Run, script string, args any, stdin *string) *registry.Result {
	t.Helper()
	in := map[string]any{"skill_name": "demo", "script_name": script}
	if args != nil {
		in["args"] = args
	}
	if stdin != nil {
		in["stdin"] = *stdin
	}
	return biCall(t, run, registry.RunSkillScriptName, in)
}

func TestRunWasmScript(t *testing.T) {
	run := scriptEnv(t, nil)
	var out scriptAnswer
	stdin := "rows"
	biOK(t, runScript(t, run, "goscript.wasm", map[string]any{"query": "x y", "tag": []string{"a", "b"}, "verbose": true, "dry": false}, &stdin), &out)
	var got struct {
		Args  []string `json:"args"`
		Stdin string   `json:"stdin"`
	}
	if err := json.Unmarshal([]byte(out.Output), &got); err != nil {
		t.Fatalf("output %q: %v", out.Output, err)
	}
	if d := cmp.Diff([]string{"--query", "x y", "--tag", "a", "--tag", "b", "--verbose"}, got.Args); d != "" || got.Stdin != "rows" {
		t.Errorf("args (-want +got):\n%s\nstdin %q", d, got.Stdin)
	}
	biOK(t, runScript(t, run, "scripts/goscript.wasm", nil, nil), &out)
	if !strings.Contains(out.Output, `"stdin":""`) {
		t.Errorf("without stdin: %s", out.Output)
	}
	// load_skill marks the .wasm scripts runnable, the shell script not.
	var loaded struct {
		Scripts []struct {
			Name     string `json:"name"`
			Runnable bool   `json:"runnable"`
		} `json:"scripts"`
	}
	biOK(t, biCall(t, run, registry.LoadSkillName, map[string]any{"skill_name": "demo"}), &loaded)
	runnable := map[string]bool{}
	for _, s := range loaded.Scripts {
		runnable[s.Name] = s.Runnable
	}
	if d := cmp.Diff(map[string]bool{"scripts/goscript.wasm": true, "scripts/reactor.wasm": true, "scripts/run.sh": false}, runnable); d != "" {
		t.Errorf("runnable (-want +got):\n%s", d)
	}
}

func TestWasmScriptFailures(t *testing.T) {
	// The short timeout only where the script spins: every run instantiates
	// a 3 MB Go module, which on a loaded machine can take most of it.
	run := scriptEnv(t, map[string]host.Grant{"sk": {Limits: host.Limits{MaxOutputBytes: 100, MaxLogBytes: 50}}})
	spinning := scriptEnv(t, map[string]host.Grant{"sk": {Limits: host.Limits{Timeout: 2 * time.Second}}})
	biFails(t, "exit 7", runScript(t, run, "goscript.wasm", map[string]any{"exit": 7}, nil), abi.CodeGuestError,
		"script failed", `"scripts/goscript.wasm" of skill "demo"`, "exited with code 7", "stderr ends: some noise\nfailing with 7")
	biFails(t, "spin", runScript(t, spinning, "goscript.wasm", map[string]any{"spin": true}, nil), abi.CodeTimeout,
		"script failed", "timed out after 2s")
	var out scriptAnswer
	biOK(t, runScript(t, run, "goscript.wasm", map[string]any{"flood": 5000}, nil), &out)
	if len(out.Output) != 100 || len(out.Stderr) != 50 || !out.Truncated {
		t.Errorf("flood: %d bytes of stdout, %d of stderr, truncated %v", len(out.Output), len(out.Stderr), out.Truncated)
	}
	biFails(t, "reactor", runScript(t, run, "reactor.wasm", nil, nil), abi.CodeUnavailable,
		"script cannot run", "not a WASI command module", "without -buildmode=c-shared")
	biFails(t, "shell", runScript(t, run, "run.sh", nil, nil), abi.CodeUnavailable, "script cannot run", "no native scripts")
	biFails(t, "bad flag name", runScript(t, run, "goscript.wasm", map[string]any{"-x": 1}, nil), abi.CodeInvalidInput, `"-x" cannot be a flag name`)
	biFails(t, "missing", runScript(t, run, "nope.wasm", nil, nil), abi.CodeNotFound, "script not found")
}

// A script gets an env var only when the skill names it (env: in SKILL.md)
// and the operator grants the skill's pack a value.
func TestWasmScriptCapabilities(t *testing.T) {
	env := map[string]any{"env": "TOKEN"}
	granted := scriptEnv(t, map[string]host.Grant{"sk": {Env: map[string]string{"TOKEN": "s3cret", "OTHER": "x"}}})
	var out scriptAnswer
	biOK(t, runScript(t, granted, "goscript.wasm", env, nil), &out)
	if out.Output != "s3cret" {
		t.Errorf("granted: %q", out.Output)
	}
	biFails(t, "a variable the skill does not name", runScript(t, granted, "goscript.wasm", map[string]any{"env": "OTHER"}, nil),
		abi.CodeGuestError, "exited with code 3", "OTHER is not set")
	denied := scriptEnv(t, nil)
	biFails(t, "no operator grant", runScript(t, denied, "goscript.wasm", env, nil), abi.CodeGuestError, "exited with code 3", "TOKEN is not set")
	biFails(t, "no folder", runScript(t, granted, "goscript.wasm", map[string]any{"read": "/etc/passwd"}, nil), abi.CodeGuestError, "exited with code 2")
}
