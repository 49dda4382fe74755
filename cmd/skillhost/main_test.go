package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// stateDir is shared by the CLI tests so modules compile once per machine.
var stateDir = testenv.StateDir()

type cliResult struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"--state-dir", stateDir}, args...), strings.NewReader(stdin), &out, &errOut)
	return cliResult{code, out.String(), errOut.String()}
}

func extismWasm(t *testing.T, name string) string {
	t.Helper()
	// go mod download fetches the module when the cache lacks it and
	// prints where it is.
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/extism/go-sdk").Output()
	if err != nil {
		t.Fatalf("locating the extism go-sdk module: %v", err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("locating the extism go-sdk module: %s %v", out, err)
	}
	return filepath.Join(m.Dir, "wasm", name)
}

func fixture(name string) string { return filepath.Join("..", "..", "testdata", "guests", name) }

func TestCallModule(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string // substring
	}{
		{"extism plugin output", []string{"--module", extismWasm(t, "count_vowels.wasm"), "--export", "count_vowels", "--input", "Hello, World!"}, "",
			0, `{"count":3,"total":3,"vowels":"aeiouAEIOU"}`, ""},
		{"input from stdin", []string{"--module", extismWasm(t, "count_vowels.wasm"), "--export", "count_vowels", "--input", "-"}, "aaa",
			0, `{"count":3,"total":3,"vowels":"aeiouAEIOU"}`, ""},
		{"raw bytes out", []string{"--module", fixture("wat/echo.wasm"), "--export", "echo", "--input", "no newline \x00 added"}, "",
			0, "no newline \x00 added", ""},
		{"guest error to stderr", []string{"--module", extismWasm(t, "fail.wasm"), "--export", "run_test"}, "",
			1, "", "Some error message"},
		{"trap", []string{"--module", fixture("wat/trap.wasm"), "--export", "trap"}, "", 1, "", "unreachable"},
		{"timeout", []string{"--module", fixture("wat/loop.wasm"), "--export", "spin", "--timeout", "50ms"}, "", 1, "", "timed out"},
		{"config", []string{"--module", fixture("wat/echo.wasm"), "--export", "config", "--input", "k", "--config", "k=v"}, "", 0, "v", ""},
		{"env from the flag", []string{"--module", fixture("go/gocaps/gocaps.wasm"), "--export", "getenv", "--input", "TOKEN", "--env", "TOKEN=abc"}, "", 0, "abc", ""},
		{"env not granted", []string{"--module", fixture("go/gocaps/gocaps.wasm"), "--export", "getenv", "--input", "HOME"}, "", 0, "<unset>", ""},
		{"fuel cap", []string{"--module", fixture("wat/loop.wasm"), "--export", "spin", "--fuel-max", "1000000"}, "", 1, "", "fuel limit of 1000000"},
		{"memory cap", []string{"--module", fixture("wat/membomb.wasm"), "--export", "grow", "--memory-max", "1MiB"}, "", 0, "16", ""},
		{"unknown export", []string{"--module", fixture("wat/echo.wasm"), "--export", "nope"}, "", 2, "", "it exports config, echo"},
		{"unknown import", []string{"--module", fixture("wat/unknown_import.wasm"), "--export", "x"}, "", 2, "", "env.evil"},
		{"missing file", []string{"--module", "/no/such.wasm", "--export", "x"}, "", 2, "", "reading module"},
		{"no export flag", []string{"--module", fixture("wat/echo.wasm")}, "", 2, "", "--export"},
		{"bad mount", []string{"--module", fixture("wat/echo.wasm"), "--export", "noop", "--allow-path", "nocolon"}, "", 2, "", "HOST:GUEST"},
		{"bad size", []string{"--module", fixture("wat/echo.wasm"), "--export", "noop", "--memory-max", "lots"}, "", 2, "", "--memory-max"},
		{"bad flag", []string{"--module", fixture("wat/echo.wasm"), "--bogus"}, "", 2, "", "unknown flag"},
	}
	if runtime.GOOS == "linux" {
		// The one call's instance runs the start function with the tick
		// check, which only the deadline bounds: counting, it would have
		// met the initialisation fuel cap (10^9 instructions) first.
		tests = append(tests, struct {
			name   string
			args   []string
			stdin  string
			code   int
			stdout string
			stderr string
		}{"spinning start function", []string{"--module", fixture("wat/start_spin.wasm"), "--export", "run", "--timeout", "2s"}, "", 1, "", "timed out"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, tt.stdin, append([]string{"call"}, tt.args...)...)
			if r.code != tt.code || r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestCallModuleMounts(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("mounted"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := fixture("go/gocaps/gocaps.wasm")
	r := cli(t, "", "call", "--module", m, "--export", "read_file", "--input", "/data/f.txt", "--allow-path", dir+":/data:ro")
	if r.code != 0 || r.stdout != "mounted" {
		t.Errorf("granted read: %+v", r)
	}
	r = cli(t, "", "call", "--module", m, "--export", "read_file", "--input", "/data/f.txt")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "error: ") {
		t.Errorf("ungranted read: %+v", r)
	}
	r = cli(t, "", "call", "--module", m, "--export", "write_file", "--input", "/data/g.txt", "--allow-path", dir+":/data:ro")
	if !strings.HasPrefix(r.stdout, "error: ") {
		t.Errorf("write to a read-only mount: %+v", r)
	}
}

func TestCallTool(t *testing.T) {
	r := cli(t, "", "call", "slugify", `{"text":"Hello, Wasm World!"}`)
	if r.code != 0 {
		t.Fatalf("slugify: %+v", r)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("output %q is not JSON: %v", r.stdout, err)
	}
	if !strings.Contains(r.stdout, "hello-wasm-world") {
		t.Errorf("slugify output %q", r.stdout)
	}
	if r := cli(t, `{"text":"From Stdin"}`, "call", "slugify", "-"); r.code != 0 || !strings.Contains(r.stdout, "from-stdin") {
		t.Errorf("args from stdin: %+v", r)
	}
	if r := cli(t, "", "call", "slugify", `{"text": 5}`); r.code != 1 || !strings.Contains(r.stderr, "invalid_input") {
		t.Errorf("tool error: %+v", r)
	}
	if r := cli(t, "", "call", "slugify", `{"text": 5}`, "--json"); r.code != 1 || !strings.Contains(r.stdout, `"is_error":true`) {
		t.Errorf("tool error as JSON: %+v", r)
	}
	if r := cli(t, "", "call", "slugify", `not json`); r.code != 1 || !strings.Contains(r.stderr, "slugify: invalid_input: the arguments are not valid JSON") {
		t.Errorf("bad JSON: %+v", r)
	}
	if r := cli(t, "", "call", "no_such_tool", `{}`); r.code != 2 || !strings.Contains(r.stderr, "no_such_tool: not_found: no tool is called") {
		t.Errorf("unknown tool: %+v", r)
	}
	if r := cli(t, "", "call"); r.code != 2 {
		t.Errorf("no name: %+v", r)
	}
}

func TestShowAndList(t *testing.T) {
	r := cli(t, "", "show", "slugify")
	for _, want := range []string{"slugify", "effective grant (", "filesystem:   none", "network:      none", "limits:"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	r = cli(t, "", "show", "slugify", "--json")
	var js map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &js) != nil || js["name"] != "slugify" {
		t.Errorf("show --json: %+v", r)
	}
	if r := cli(t, "", "show", "nope"); r.code != 2 {
		t.Errorf("show unknown: %+v", r)
	}
	r = cli(t, "", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "slugify") || !strings.Contains(r.stdout, "bundled") {
		t.Errorf("list: %+v", r)
	}
}
