package skillhost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
)

// TestNoIndex: an engine opened with NoIndex creates no index file, its
// searches say ErrNoIndex, and Reload still works.
func TestNoIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: dir, Operator: packs.DefaultConfig(), NoUserSources: true, NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := os.Stat(filepath.Join(dir, "index.db")); !os.IsNotExist(err) {
		t.Errorf("index.db exists (stat: %v)", err)
	}
	if _, err := e.SearchTools(ctx, index.ToolQuery{Query: "slug"}); !errors.Is(err, skillhost.ErrNoIndex) {
		t.Errorf("SearchTools: %v, want ErrNoIndex", err)
	}
	if _, err := e.GetSkills(ctx, index.SkillGetRequest{Names: []string{"x"}}); !errors.Is(err, skillhost.ErrNoIndex) {
		t.Errorf("GetSkills: %v, want ErrNoIndex", err)
	}
	if _, err := e.RebuildIndex(ctx); !errors.Is(err, skillhost.ErrNoIndex) {
		t.Errorf("RebuildIndex: %v, want ErrNoIndex", err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Errorf("Reload: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.db")); !os.IsNotExist(err) {
		t.Errorf("index.db exists after Reload (stat: %v)", err)
	}
}

// TestGrantFor: the grant GrantFor returns replaces the module's grant
// as a Config.Grants entry does; it sees each module with the grant the
// operator config gives it, once, as the registry is built once.
func TestGrantFor(t *testing.T) {
	ctx := context.Background()
	op, err := packs.ParseConfig(filepath.Join(t.TempDir(), "skillhost.toml"), []byte(`[sources]
user = ""
workspace = ""

[packs.core]
allowed_hosts = ["api.example.com"]
`))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: t.TempDir(), Operator: op, NoIndex: true,
		GrantFor: func(pack string, tools []string, g skillhost.Grant) (skillhost.Grant, bool) {
			if !slices.Contains(tools, "http_fetch") {
				return g, false
			}
			calls++
			if pack != "core" || !slices.Equal(g.AllowedHosts, []string{"api.example.com"}) {
				t.Errorf("GrantFor sees pack %s with the operator's hosts %v, want core with the config's", pack, g.AllowedHosts)
			}
			g.AllowedHosts = append(slices.Clip(g.AllowedHosts), "cdn.example.com")
			return g, true
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	if calls != 1 {
		t.Errorf("GrantFor called %d times for http_fetch's module, want once", calls)
	}
	tl, err := e.Tool("http_fetch")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"api.example.com", "cdn.example.com"}; !slices.Equal(tl.Operator.AllowedHosts, want) || tl.GrantFrom != skillhost.GrantFromEmbedder {
		t.Errorf("http_fetch operator hosts %v from %s, want %v from the embedder", tl.Operator.AllowedHosts, tl.GrantFrom, want)
	}
}
