package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// errorCase is one failure of a verb: its arguments and stdin.
type errorCase struct {
	name  string
	args  []string
	stdin string
}

// TestErrorsGolden runs every error path of every verb and compares exit
// code, stdout and stderr with testdata/cli/errors/VERB.txt (go test
// ./cmd/skillhost -run TestErrorsGolden -update rewrites them), so a
// change to what a person or a script reads of a failure is seen in
// review. Each failure is one line on stderr, "skillhost: message" or
// "skillhost: TOOL: CODE: message" for a call's failure, with no Go type
// names and one prefix; call --json puts it on stdout as a JSON object.
func TestErrorsGolden(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "notes.wasm")
	conf := filepath.Join(dir, "op.toml")
	for name, data := range map[string]string{notWasm: "not a module", conf: "[sources]\nuser = \"\"\n"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	echo, trap, loop, unknownImport := fixture("wat/echo.wasm"), fixture("wat/trap.wasm"), fixture("wat/loop.wasm"), fixture("wat/unknown_import.wasm")
	verbs := map[string][]errorCase{
		"call": {
			{"no tool", []string{"call"}, ""},
			{"too many arguments", []string{"call", "slugify", "{}", "{}"}, ""},
			{"unknown tool", []string{"call", "slugfy", "{}"}, ""},
			{"unknown tool far from any", []string{"call", "zzzzzz", "{}"}, ""},
			{"a skill is no tool", []string{"call", "pack.core.api.cursor_pagination", "{}"}, ""},
			{"malformed JSON", []string{"call", "slugify", "{bad"}, ""},
			{"malformed JSON on stdin", []string{"call", "slugify"}, `{"text":`},
			{"not an object", []string{"call", "slugify", "[1]"}, ""},
			{"a string", []string{"call", "slugify", `"x"`}, ""},
			{"schema violation", []string{"call", "slugify", `{"text":5}`}, ""},
			{"missing field", []string{"call", "slugify", `{}`}, ""},
			{"explicit empty input", []string{"call", "slugify", ""}, `{"text":"not read"}`},
			{"two inputs", []string{"call", "slugify", "{}", "--input", "{}"}, ""},
			{"json: malformed", []string{"call", "slugify", "{bad", "--json"}, ""},
			{"json: unknown tool", []string{"call", "slugfy", "{}", "--json"}, ""},
			{"json: schema violation", []string{"call", "slugify", `{"text":5}`, "--json"}, ""},
			{"json: bad flag", []string{"call", "--json", "slugify", "--bogus"}, ""},
			{"json: bad flag value", []string{"call", "slugify", "--json", "--timeout", "-1s"}, ""},
			{"operator file given to --config", []string{"call", "slugify", "{}", "--config", conf}, ""},
			{"config not K=V", []string{"call", "slugify", "{}", "--config", "novalue"}, ""},
			{"bad flag", []string{"call", "slugify", "--bogus"}, ""},
			{"negative timeout", []string{"call", "slugify", "--timeout", "-1s"}, ""},
			{"bad size", []string{"call", "slugify", "--memory-max", "lots"}, ""},
			{"bad log level", []string{"call", "slugify", "--log-level", "loud"}, ""},
			{"bad mount", []string{"call", "slugify", "--allow-path", "nocolon"}, ""},
			{"export without module", []string{"call", "slugify", "--export", "x"}, ""},
			{"module: no export", []string{"call", "--module", echo}, ""},
			{"module: argument", []string{"call", "--module", echo, "--export", "echo", "x"}, ""},
			{"module: dry run", []string{"call", "--module", echo, "--export", "echo", "--dry-run"}, ""},
			{"module: missing file", []string{"call", "--module", "/no/such.wasm", "--export", "x"}, ""},
			{"module: not wasm", []string{"call", "--module", notWasm, "--export", "x"}, ""},
			{"module: unknown import", []string{"call", "--module", unknownImport, "--export", "x"}, ""},
			{"module: unknown export", []string{"call", "--module", echo, "--export", "nope"}, ""},
			{"module: guest error", []string{"call", "--module", echo, "--export", "fail"}, ""},
			{"module: trap", []string{"call", "--module", trap, "--export", "trap"}, ""},
			{"module: timeout", []string{"call", "--module", loop, "--export", "spin", "--timeout", "50ms"}, ""},
			{"module: fuel", []string{"call", "--module", loop, "--export", "spin", "--fuel-max", "1000"}, ""},
			{"module json: guest error", []string{"call", "--module", echo, "--export", "fail", "--json"}, ""},
			{"module json: trap", []string{"call", "--module", trap, "--export", "trap", "--json"}, ""},
			{"module json: unknown export", []string{"call", "--module", echo, "--export", "nope", "--json"}, ""},
			{"module json: missing file", []string{"call", "--module", "/no/such.wasm", "--export", "x", "--json"}, ""},
		},
		"show": {
			{"no name", []string{"show"}, ""},
			{"two names", []string{"show", "a", "b"}, ""},
			{"unknown name", []string{"show", "slugfy"}, ""},
			{"unknown skill", []string{"show", "cursor-paginaton"}, ""},
			{"nothing close", []string{"show", "zzzzzz"}, ""},
			{"operator file given to --config", []string{"--config", conf, "show", "slugify"}, ""},
			{"missing config file", []string{"--config-file", "/no/such.toml", "show", "slugify"}, ""},
		},
		"list": {
			{"argument", []string{"list", "tools"}, ""},
			{"tools and skills", []string{"list", "--tools", "--skills"}, ""},
		},
		"search": {
			{"no query", []string{"search"}, ""},
			{"blank query", []string{"search", "  "}, ""},
			{"bad type", []string{"search", "--type", "fuzzy", "x"}, ""},
			{"limit too high", []string{"search", "--limit", "50", "x"}, ""},
			{"limit zero", []string{"search", "--limit", "0", "x"}, ""},
			{"task type on tools", []string{"search", "--task-type", "api", "x"}, ""},
			{"bad task type", []string{"search", "--skills", "--task-type", "web", "x"}, ""},
			{"bad pattern", []string{"search", "--type", "regex", "("}, ""},
			{"no tool found", []string{"search", "zzzzqqq"}, ""},
			{"no skill found", []string{"search", "--skills", "zzzzqqq"}, ""},
		},
		"describe": {
			{"no file", []string{"describe"}, ""},
			{"missing file", []string{"describe", "/no/such.wasm"}, ""},
			{"not wasm", []string{"describe", notWasm}, ""},
			{"no describe export", []string{"describe", echo}, ""},
		},
		"validate": {
			{"no path", []string{"validate"}, ""},
			{"missing path", []string{"validate", "/no/such/folder"}, ""},
			{"not a skill file", []string{"validate", notWasm}, ""},
		},
		"other": {
			{"unknown verb", []string{"lsit"}, ""},
			{"index argument", []string{"index", "x"}, ""},
			{"version argument", []string{"version", "x"}, ""},
			{"cache without verb", []string{"cache"}, ""},
			{"cache bad verb", []string{"cache", "purge"}, ""},
			{"eval without files", []string{"eval"}, ""},
		},
	}
	for verb, cases := range verbs {
		t.Run(verb, func(t *testing.T) {
			var b strings.Builder
			for _, c := range cases {
				r := cli(t, c.stdin, append([]string{"--no-user-sources"}, c.args...)...)
				fmt.Fprintf(&b, "=== %s\n$ skillhost %s\nexit %d\n", c.name, shellJoin(c.args), r.code)
				if r.stdout != "" {
					fmt.Fprintf(&b, "--- stdout\n%s", withNewline(r.stdout))
				}
				if r.stderr != "" {
					fmt.Fprintf(&b, "--- stderr\n%s", withNewline(r.stderr))
				}
				b.WriteString("\n")
				checkErrorShape(t, c, r)
			}
			got := strings.ReplaceAll(b.String(), dir, "<tmp>")
			// How long a timed-out call ran, and whose deadline came
			// first, depend on the machine's timing.
			got = timedOut.ReplaceAllString(got, "timed out after <time>$1")
			testenv.Golden(t, filepath.Join("..", "..", "testdata", "cli", "errors", verb+".txt"), []byte(got), *update)
		})
	}
}

var timedOut = regexp.MustCompile(`timed out after [^\n"]*?(\\?"|\n)`)

// checkErrorShape holds every failure to the format: one stderr line with
// one "skillhost: " prefix and no Go type names, or with call --json a
// JSON error object on stdout and nothing on stderr.
func checkErrorShape(t *testing.T, c errorCase, r cliResult) {
	t.Helper()
	if r.code == 0 {
		return
	}
	if r.code != exitToolError && r.code != exitUsage {
		t.Errorf("%s: exit %d, want 1 or 2", c.name, r.code)
	}
	out := r.stdout + r.stderr
	bare := strings.ReplaceAll(out, "skillhost: ", "")
	if strings.Contains(out, "skillhost: skillhost:") || strings.Contains(out, "Go value") || strings.Contains(out, "json.RawMessage") ||
		strings.Contains(bare, "registry: ") || strings.Contains(bare, "host: ") || strings.Contains(bare, "index: ") {
		t.Errorf("%s: internals in the message: %q %q", c.name, r.stdout, r.stderr)
	}
	if c.args[0] == "call" && hasFlag(c.args, "--json") {
		var v struct {
			IsError bool `json:"is_error"`
			Error   struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || !v.IsError || v.Error.Code == "" || v.Error.Message == "" {
			t.Errorf("%s: --json gave no JSON error object: %q (%v)", c.name, r.stdout, err)
		}
		if r.stderr != "" {
			t.Errorf("%s: --json wrote to stderr: %q", c.name, r.stderr)
		}
		return
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "skillhost: ") {
		t.Errorf("%s: stderr %q does not end with a skillhost: line", c.name, r.stderr)
	}
}

// shellJoin quotes args as a shell would need them.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \"'{}[]()$|*?<>;&\\") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func TestMessage(t *testing.T) {
	for in, want := range map[string]string{
		"registry: tool not found: \"x\"":                      `"x"`,
		"index: tool search: index: limit is out of range: 50": "tool search: limit is out of range: 50",
		"skillhost: skillhost: boom":                           "boom",
		"pack core: unknown host: example.com":                 "pack core: unknown host: example.com",
		"opening the index: index: open \"x\": denied":         `opening the index: open "x": denied`,
	} {
		if got := message(errors.New(in)); got != want {
			t.Errorf("message(%q) = %q, want %q", in, got, want)
		}
	}
}
