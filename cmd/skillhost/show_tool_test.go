package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
)

// relayPack calls other tools; it asks for more time than the operator
// allows and less memory than the default.
const relayPack = `name: relay
version: 1.0.0
modules:
  - name: m
    path: m.wasm
    request:
      tools: [slugify, word_count]
      services: [mail.send]
    limits: {timeout: 1h, max_memory: 32MiB, max_fuel: 1000000}
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
	return dir, []string{"--config", filepath.Join(dir, "skillhost.toml"), "--pack", pack}
}

// TestShowToolGolden shows a tool whose limits come from each side: the
// pack's own (memory, fuel), its [packs.relay] section (timeout), the
// operator's [limits] (output) and the built-in defaults (the rest), and
// whose granted tools are those the section lists.
func TestShowToolGolden(t *testing.T) {
	dir, flags := relaySetup(t, `[limits]
max_output = "2MiB"
timeout = "1m"

[packs.relay]
tools = ["slugify"]
limits = {timeout = "5s"}
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
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
}
