package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runIn runs the CLI without the tests' shared --state-dir.
func runIn(t *testing.T, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return cliResult{code, out.String(), errOut.String()}
}

// TestStateDirFromConfig: the commands that open no engine (describe, call
// --module) take the state folder from skillhost.toml's state_dir, as
// those that open one do. The state folder here is a regular file, so a
// command that used it fails naming it, and one that ignored it would not.
func TestStateDirFromConfig(t *testing.T) {
	t.Setenv("SKILLHOST_STATE_DIR", "")
	dir := t.TempDir()
	blocked := filepath.Join(dir, "blocked")
	if err := os.WriteFile(blocked, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "skillhost.toml")
	if err := os.WriteFile(conf, []byte("state_dir = \"blocked\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join("..", "..", "packs", "bundled", "modules", "text", "text.wasm")
	// call's own --config flag is a config value (K=V), so the file is
	// named by $SKILLHOST_CONFIG.
	t.Setenv("SKILLHOST_CONFIG", conf)
	for name, args := range map[string][]string{
		"describe":      {"describe", text},
		"call --module": {"call", "--module", fixture("wat/echo.wasm"), "--export", "echo", "--input", "x"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runIn(t, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, blocked+":") {
				t.Errorf("exit %d, stderr %q; want exit %d naming %s", r.code, r.stderr, exitUsage, blocked)
			}
		})
	}

	// With a usable state_dir (whose cache is the tests' shared one, so
	// nothing compiles again), describe works, and --state-dir still wins
	// over the config.
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(stateDir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(stateDir, "cache"), filepath.Join(state, "cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("state_dir = \"state\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, "describe", text); r.code != 0 || !strings.Contains(r.stdout, "slugify") {
		t.Errorf("describe with state_dir: %+v", r)
	}
	if r := runIn(t, "--state-dir", blocked, "describe", text); r.code != exitUsage {
		t.Errorf("--state-dir did not win over state_dir: %+v", r)
	}
}
