package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// packDir writes a pack folder with manifest and a copy of the fixture
// module named m.wasm.
func packDir(t *testing.T, manifest, module string) string {
	t.Helper()
	dir := t.TempDir()
	wasm, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// validate reads each module's exports and refuses what loading would: a
// module with neither tools: nor describe, a command module (the missing
// -buildmode=c-shared); an entry naming a missing export is a warning.
// The summary says what will load.
func TestValidateJudgesModules(t *testing.T) {
	text := filepath.Join("..", "..", "packs", "bundled", "modules", "text", "text.wasm")
	tests := []struct {
		name, manifest, module string
		code                   int
		want                   []string
	}{
		{"no tools, no describe", "name: e\nmodules:\n  - {name: m, path: m.wasm}\n", fixture("wat/echo.wasm"), 1,
			[]string{"pack.yaml: pack e: module cannot serve its tools: module m (m.wasm) has no tools: entry in pack.yaml and no describe export"}},
		{"command module", "name: c\nmodules:\n  - {name: m, path: m.wasm, tools: [{name: run, description: Runs.}]}\n", fixture("wat/command.wasm"), 1,
			[]string{"is a WASI command module", "add -buildmode=c-shared"}},
		{"missing export", "name: x\nmodules:\n  - {name: m, path: m.wasm, tools: [{name: echo, description: E.}, {name: gone, description: G.}]}\n", fixture("wat/echo.wasm"), 0,
			[]string{`warning: `, `has no export "gone" for tool "gone", so calling it fails`, "1 pack(s), 2 tool(s), 0 skill(s)"}},
		{"describing module", "name: d\nmodules:\n  - {name: m, path: m.wasm}\n", text, 0,
			[]string{"ok ", "1 pack(s), 0 tool(s) listed and those 1 module(s) describe when loaded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := packDir(t, tt.manifest, tt.module)
			for _, arg := range []string{dir, filepath.Join(dir, "pack.yaml")} {
				r := cli(t, "", "validate", arg)
				if r.code != tt.code {
					t.Errorf("validate %s: exit %d, want %d\n%s%s", arg, r.code, tt.code, r.stdout, r.stderr)
				}
				for _, w := range tt.want {
					if strings.HasPrefix(w, "1 pack(s)") && strings.HasSuffix(arg, "pack.yaml") {
						w = strings.Replace(strings.Replace(w, "1 pack(s)", "module(s)", 1), ", 0 skill(s)", "", 1)
					}
					if !strings.Contains(r.stdout, w) {
						t.Errorf("validate %s: output does not say %q:\n%s", arg, w, r.stdout)
					}
				}
			}
		})
	}
}

// Calling an export of a command module directly traps, and the error
// names the flag that builds a module the host can call.
func TestCallModuleNamesTheMissingBuildMode(t *testing.T) {
	r := cli(t, "", "call", "--module", fixture("wat/command.wasm"), "--export", "run", "--input", "{}")
	if r.code != 1 || !strings.Contains(r.stderr, "wasm error: unreachable") || !strings.Contains(r.stderr, "add -buildmode=c-shared") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	// A trap of a reactor module gets no such hint.
	r = cli(t, "", "call", "--module", fixture("wat/trap.wasm"), "--export", "trap", "--input", "")
	if r.code != 1 || !strings.Contains(r.stderr, "trap") {
		t.Errorf("trap.wasm: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "buildmode") {
		t.Errorf("a reactor's trap mentions the build mode: %s", r.stderr)
	}
}
