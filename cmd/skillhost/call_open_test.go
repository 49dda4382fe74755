package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
)

// TestCallOpensEngineOnceWithoutIndex: skillhost call opens the engine
// once, grant flags included, and never creates or writes the discovery
// index. It runs in a fresh folder with the state folder named by
// $SKILLHOST_STATE_DIR, whose cache is the tests' shared one.
func TestCallOpensEngineOnceWithoutIndex(t *testing.T) {
	work := t.TempDir()
	t.Setenv("SKILLHOST_STATE_DIR", filepath.Join(work, ".skillhost"))
	t.Setenv("SKILLHOST_CONFIG", "")
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "notes.txt"), []byte("from the mount\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(stateDir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, ".skillhost"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(stateDir, "cache"), filepath.Join(work, ".skillhost", "cache")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	opens := 0
	defer func(f func(context.Context, skillhost.Config) (*skillhost.Engine, error)) { openEngineFunc = f }(openEngineFunc)
	openEngineFunc = func(ctx context.Context, cfg skillhost.Config) (*skillhost.Engine, error) {
		opens++
		return skillhost.Open(ctx, cfg)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no grant flags", []string{"call", "slugify", `{"text":"Hello, World!"}`}, "hello-world"},
		// The flag adds the mount to the operator's grant of the files
		// module's pack: without it the call fails.
		{"grant flags", []string{"call", "read_file", `{"path":"notes.txt"}`, "--allow-path", data + ":/data:ro"}, "from the mount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opens = 0
			r := runIn(t, tc.args...)
			if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, tc.want)
			}
			if opens != 1 {
				t.Errorf("the engine was opened %d times, want once", opens)
			}
			if _, err := os.Stat(filepath.Join(work, ".skillhost", "index.db")); !os.IsNotExist(err) {
				t.Errorf("call left an index behind (stat: %v)", err)
			}
		})
	}
	if r := runIn(t, "call", "read_file", `{"path":"notes.txt"}`); r.code != exitToolError {
		t.Errorf("read_file without --allow-path: %+v; want a tool error", r)
	}
	// search needs the index, and makes it.
	if r := runIn(t, "search", "slug"); r.code != 0 {
		t.Fatalf("search: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(work, ".skillhost", "index.db")); err != nil {
		t.Errorf("search made no index: %v", err)
	}
	// So do the built-in search tools, called by name.
	for _, c := range []struct{ tool, args, want string }{
		{"tool_search", `{"query":"turn a title into a url slug"}`, `"slugify"`},
		{"skill_list", `{}`, `"log-triage"`},
	} {
		opens = 0
		if r := runIn(t, "call", c.tool, c.args); r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("call %s: exit %d, stdout %.300q, stderr %q; want %s", c.tool, r.code, r.stdout, r.stderr, c.want)
		}
		if opens != 1 {
			t.Errorf("call %s opened the engine %d times, want once", c.tool, opens)
		}
	}
}
