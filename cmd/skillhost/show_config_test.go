package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const showConfigPack = `name: stats
modules:
  - name: textstats
    path: textstats.wasm
    tools:
      - name: count_vowels
        description: Count vowels.
        config_params:
          - {name: vowels, type: string, default: "aeiou"}
          - {name: token, type: secret}
          - {name: limit, type: number, min: 1, max: 10, unit: items}
          - {name: mode, type: select, options: [fast, exact], default: fast}
`

// showConfigSetup writes the stats pack and a config file giving it
// values, and returns the global flags that load them.
func showConfigSetup(t *testing.T, toml string) []string {
	t.Helper()
	dir := t.TempDir()
	pack := filepath.Join(dir, "stats")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join("..", "..", "guests", "rust", "examples", "textstats", "textstats.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		filepath.Join(pack, "textstats.wasm"): wasm,
		filepath.Join(pack, "pack.yaml"):      []byte(showConfigPack),
		filepath.Join(dir, "skillhost.toml"):  []byte("[sources]\nbundled = false\nuser = \"\"\nworkspace = \"\"\n" + toml),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--config-file", filepath.Join(dir, "skillhost.toml"), "--pack", pack}
}

// show lists a tool's settings with their values and where each comes
// from; a secret's value is ***, in text and JSON alike.
func TestShowConfigValues(t *testing.T) {
	flags := showConfigSetup(t, "[packs.stats.config]\nvowels = \"xyz\"\ntoken = \"tok-NEVER-SHOWN-3\"\nlimit = 3\n")
	r := cli(t, "", append(flags, "show", "count_vowels")...)
	if r.code != 0 {
		t.Fatalf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := `
  config (set in [packs.stats.config]):
    vowels  string  "xyz" (operator)
    token   secret  *** (operator)
    limit   number  3 items (operator)
    mode    select  "fast" (default)    one of fast, exact
`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("show does not list the settings as\n%s\ngot:\n%s", want, r.stdout)
	}

	r = cli(t, "", append(flags, "show", "--json", "count_vowels")...)
	if r.code != 0 {
		t.Fatalf("show --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		Config    []map[string]any `json:"config"`
		Effective struct {
			Config map[string]string `json:"config"`
		} `json:"effective"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	wantJSON := []map[string]any{
		{"name": "vowels", "type": "string", "value": "xyz", "from": "operator"},
		{"name": "token", "type": "secret", "value": "***", "from": "operator"},
		{"name": "limit", "type": "number", "unit": "items", "value": "3", "from": "operator"},
		{"name": "mode", "type": "select", "options": []any{"fast", "exact"}, "value": "fast", "from": "default"},
	}
	if d := cmp.Diff(wantJSON, got.Config); d != "" {
		t.Errorf("show --json config (-want +got)\n%s", d)
	}
	if got.Effective.Config["token"] != "***" {
		t.Errorf("effective config = %v; want token as ***", got.Effective.Config)
	}
	if strings.Contains(r.stdout+r.stderr, "NEVER-SHOWN") {
		t.Errorf("show --json prints a secret:\n%s", r.stdout)
	}
}

// A value that does not fit is reported on stderr (the tool is then not
// loaded), with the file and line and without a secret's value.
func TestShowConfigProblem(t *testing.T) {
	flags := showConfigSetup(t, "[packs.stats.config]\ntoken = \"tok-NEVER-SHOWN-4\"\nlimit = 50\n")
	r := cli(t, "", append(flags, "show", "count_vowels")...)
	if r.code == 0 {
		t.Errorf("show of a tool whose pack has a bad value succeeded:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "skillhost.toml:7: packs.stats.config.limit is 50; it must be at most 10") {
		t.Errorf("stderr does not name the bad value:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "NEVER-SHOWN") {
		t.Errorf("output holds a secret:\n%s%s", r.stdout, r.stderr)
	}
}
