package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// relayPack calls other tools; it asks for more time than the operator
// allows, and less memory and a smaller write quota than the defaults.
const relayPack = `name: relay
version: 1.0.0
modules:
  - name: m
    path: m.wasm
    request:
      tools: [slugify, word_count]
      services: [mail.send]
    limits: {timeout: 1h, max_memory: 32MiB, max_fuel: 1000000, max_write: 1MiB}
    tools:
      - name: call_tool
        description: Call another tool by name.
`

// relaySetup writes the relay pack and a config file for it, and returns
// the folder and the global flags that load them.
func relaySetup(t *testing.T, toml string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	pack := filepath.Join(dir, "relay")
	if err := os.MkdirAll(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(fixture("wat/tool_call.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		filepath.Join(pack, "m.wasm"):        wasm,
		filepath.Join(pack, "pack.yaml"):     []byte(relayPack),
		filepath.Join(dir, "skillhost.toml"): []byte("[sources]\nbundled = false\nuser = \"\"\nworkspace = \"\"\n\n" + toml),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{"--config-file", filepath.Join(dir, "skillhost.toml"), "--pack", pack}
}

// TestShowToolGolden shows a tool whose limits come from each side: the
// pack's own (memory, fuel, writes, held below the [limits] 8 MiB), its
// [packs.relay] section (timeout, open files), the operator's [limits]
// (output) and the built-in defaults (the rest); whose granted tools are
// those the section lists; and whose isolation is the [sandbox] default.
func TestShowToolGolden(t *testing.T) {
	dir, flags := relaySetup(t, `[limits]
max_output = "2MiB"
timeout = "1m"
max_write = "8MiB"
max_open_files = 32

[sandbox]
isolation = "process"

[packs.relay]
tools = ["slugify"]
limits = {timeout = "5s", max_open_files = 16}
`)
	for _, tc := range []struct{ golden, format string }{
		{"show-tool.golden.txt", ""},
		{"show-tool.golden.json", "--json"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			args := append(append([]string(nil), flags...), "show", "call_tool")
			if tc.format != "" {
				args = append(args, tc.format)
			}
			r := cli(t, "", args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			got := strings.ReplaceAll(r.stdout, dir, "<dir>")
			testenv.Golden(t, filepath.Join("..", "..", "testdata", "packs", "cli", tc.golden), []byte(got), *update)
		})
	}
}

// Without a section the requested tools are not granted, and show says how
// to grant them; the pack's timeout is held to the default.
func TestShowToolWithoutSection(t *testing.T) {
	_, flags := relaySetup(t, "")
	r := cli(t, "", append(flags, "show", "call_tool")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := regexp.MustCompile(` +`).ReplaceAllString(r.stdout, " ") // columns as single spaces
	for _, want := range []string{
		"effective grant (no [packs.relay] section: nothing but the default limits):",
		"tools: none (requested slugify, word_count; the operator grants tools with tools = [...] in [packs.relay])",
		"services: none\n",
		"timeout 30s default\n",
		"memory 32 MiB pack\n",
		"writes 1 MiB pack\n",
		"open files 64 default\n",
		"isolation: in-process (default)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
}

// The isolation a tool runs with is its pack section's, else the [sandbox]
// default, else in-process; show says which, in text and JSON.
func TestShowToolIsolation(t *testing.T) {
	for _, tc := range []struct {
		name, toml, text, json, from string
	}{
		{"none", "", "isolation: in-process (default)", "in-process", "default"},
		{"sandbox", "[sandbox]\nisolation = \"process\"\n", "isolation: process (operator default, [sandbox] isolation)", "process", "operator default"},
		{"section over sandbox", "[sandbox]\nisolation = \"process\"\n[packs.relay]\nisolation = \"in-process\"\n",
			"isolation: in-process (operator, [packs.relay] isolation)", "in-process", "operator"},
		{"section", "[packs.relay]\nisolation = \"process\"\n", "isolation: process (operator, [packs.relay] isolation)", "process", "operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, flags := relaySetup(t, tc.toml)
			r := cli(t, "", append(flags, "show", "call_tool")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "\n  "+tc.text+"\n") {
				t.Errorf("show lacks %q:\n%s", tc.text, r.stdout)
			}
			r = cli(t, "", append(flags, "show", "--json", "call_tool")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got struct {
				Isolation       string `json:"isolation"`
				IsolationSource string `json:"isolation_source"`
				Effective       struct {
					Isolation string `json:"isolation"`
				} `json:"effective"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			if got.Isolation != tc.json || got.IsolationSource != tc.from {
				t.Errorf("isolation %q from %q; want %q from %q", got.Isolation, got.IsolationSource, tc.json, tc.from)
			}
			if want := map[bool]string{true: "", false: tc.json}[tc.from == "default"]; got.Effective.Isolation != want {
				t.Errorf("effective.isolation %q; want %q", got.Effective.Isolation, want)
			}
		})
	}
}
