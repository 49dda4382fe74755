package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scriptSource is a skill source holding the skill demo, whose script is
// the goscript command fixture.
func scriptSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sk")
	if err := os.MkdirAll(filepath.Join(dir, "demo", "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(fixture("go/goscript/goscript.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo", "scripts", "goscript.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "demo", "SKILL.md"), []byte("---\nname: demo\ndescription: Demo.\n---\nRun it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunScript(t *testing.T) {
	src := scriptSource(t)
	base := []string{"--no-bundled", "--no-user-sources", "--pack", src, "run-script", "demo"}
	r := cli(t, "piped", append(base, "goscript.wasm", "--arg", "q=x", "--arg", "q=y z", "--arg", "v", "--stdin")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		Args  []string `json:"args"`
		Stdin string   `json:"stdin"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%q: %v", r.stdout, err)
	}
	if d := cmp.Diff([]string{"--q", "x", "--q", "y z", "--v"}, got.Args); d != "" || got.Stdin != "piped" {
		t.Errorf("args (-want +got):\n%s\nstdin %q", d, got.Stdin)
	}
	// Without --stdin the script reads nothing, whatever is piped.
	r = cli(t, "piped", append(base, "scripts/goscript.wasm", "--args", `{"b":true,"n":2,"off":false}`)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"args":["--b","--n","2"],"stdin":""`) {
		t.Errorf("--args: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"non-zero exit", []string{"goscript.wasm", "--arg", "exit=5"}, 1, "exited with code 5; stderr ends: some noise\nfailing with 5"},
		{"unknown script", []string{"nope.wasm"}, 2, `script not found: skill "demo" has no script "nope.wasm"`},
		{"both --arg and --args", []string{"goscript.wasm", "--arg", "a=1", "--args", "{}"}, 2, "not both"},
		{"--args not an object", []string{"goscript.wasm", "--args", "[1]"}, 2, "--args must be a JSON object"},
		{"--arg without a name", []string{"goscript.wasm", "--arg", "=x"}, 2, "has no name"},
		{"one argument", nil, 2, "needs a SKILL and a SCRIPT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, "", append(base, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want %d; stderr %q does not say %q", r.code, tt.code, r.stderr, tt.want)
			}
		})
	}
	r = cli(t, "", "--no-bundled", "--no-user-sources", "--pack", src, "run-script", "nobody", "x.wasm")
	if r.code != 2 || !strings.Contains(r.stderr, "skill not found") {
		t.Errorf("unknown skill: exit %d: %s", r.code, r.stderr)
	}
}
