package skillhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/server/serveconf"
	"github.com/skillhost/skillhost/tenancy"
)

// A pack a tenant lists in skillhost.toml has its skills kept for that
// tenant alone: the other tenant's runs, and runs without a tenant, do
// not find, list or read them. When the pack changes hands, its old
// owner loses it, though the index file is the same.
func TestPackTenantSkills(t *testing.T) {
	family := "" // the skill tool family of the engines open makes
	dir := t.TempDir()
	skill := filepath.Join(dir, "alpha", "alpha-guide", "SKILL.md")
	os.MkdirAll(filepath.Dir(skill), 0o755)
	os.WriteFile(skill, []byte("---\nname: alpha-guide\ndescription: How to ship alpha widgets.\n---\n\nShip them.\n"), 0o644)
	open := func(owner string) *skillhost.Engine {
		t.Helper()
		toml := "[skill_discovery]\ntools = \"" + family + "\"\n"
		for _, id := range []string{"a", "b"} {
			toml += "[tenants." + id + "]\napi_keys = [\"" + serveconf.HashKey("key-"+id) + "\"]\n"
			if id == owner {
				toml += "packs = [\"alpha\"]\n"
			}
		}
		cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(toml))
		if err != nil {
			t.Fatal(err)
		}
		e, err := skillhost.Open(context.Background(), skillhost.Config{Operator: cfg, StateDir: testenv.StateDir(),
			IndexPath: filepath.Join(dir, "index.db"), NoBundled: true, NoUserSources: true, PackDirs: []string{filepath.Join(dir, "alpha")}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		if got := e.Tenants().Owner("alpha"); got != tenancy.OwnedBy(owner) {
			t.Fatalf("Tenants().Owner(alpha) = %v, want tenant %q", got, owner)
		}
		return e
	}
	sees := func(e *skillhost.Engine, tenant string) map[string]bool {
		t.Helper()
		run, err := e.NewRun(skillhost.RunContext{Tenant: tenant}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for tool, args := range map[string]string{
			"skill_search": `{"query":"widgets"}`, "skill_get": `{"names":["alpha-guide"]}`, "skill_list": `{}`,
			"list_skills": `{}`, "load_skill": `{"skill_name":"alpha-guide"}`,
		} {
			if _, ok := run.Registry().Tool(tool); !ok {
				continue // the other skill tool family's
			}
			res, err := run.Call(context.Background(), tool, json.RawMessage(args), nil)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(res.Output, &m)
			delete(m, "missing")
			b, _ := json.Marshal(m)
			out[tool] = !res.IsError && strings.Contains(string(b), "alpha-guide")
		}
		return out
	}
	all := map[string]bool{"skill_search": true, "skill_get": true, "skill_list": true, "list_skills": true, "load_skill": true}
	none := map[string]bool{"skill_search": false, "skill_get": false, "skill_list": false, "list_skills": false, "load_skill": false}
	familyOf := map[string]string{"skill_search": "search", "skill_get": "search", "skill_list": "search", "list_skills": "load", "load_skill": "load"}
	for _, step := range []struct{ owner, other, family string }{{"a", "b", "load"}, {"b", "a", "load"}, {"a", "b", "search"}, {"b", "a", "search"}} {
		family = step.family
		e := open(step.owner)
		for tenant, want := range map[string]map[string]bool{step.owner: all, step.other: none, "": none} {
			got := sees(e, tenant)
			for tool := range want {
				if familyOf[tool] != family {
					continue
				}
				if got[tool] != want[tool] {
					t.Errorf("owner %s: tenant %q: %s finds alpha-guide = %v, want %v", step.owner, tenant, tool, got[tool], want[tool])
				}
			}
		}
		e.Close(context.Background())
	}
}

// A Go skill that replaces an owned pack's file skill of its name is the
// embedder's: every tenant's skill tools serve it, as the index does,
// rather than only the pack owner's.
func TestGoSkillReplacingOwnedSkill(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, "alpha", "alpha-guide", "SKILL.md")
	os.MkdirAll(filepath.Dir(skill), 0o755)
	os.WriteFile(skill, []byte("---\nname: alpha-guide\ndescription: The file skill.\n---\n\nFile.\n"), 0o644)
	toml := "[tenants.a]\napi_keys = [\"" + serveconf.HashKey("key-a") + "\"]\npacks = [\"alpha\"]\n" +
		"[tenants.b]\napi_keys = [\"" + serveconf.HashKey("key-b") + "\"]\n"
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	e, err := skillhost.Open(context.Background(), skillhost.Config{Operator: cfg, StateDir: dir,
		NoBundled: true, NoUserSources: true, PackDirs: []string{filepath.Join(dir, "alpha")},
		GoSkills: []skillhost.Skill{{Name: "alpha-guide", Description: "The Go skill.", Instructions: "Go."}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	for _, tenant := range []string{"a", "b"} {
		run, err := e.NewRun(skillhost.RunContext{Tenant: tenant}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := run.Call(context.Background(), "load_skill", json.RawMessage(`{"skill_name":"alpha-guide"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(string(res.Output), "The Go skill.") {
			t.Errorf("tenant %s: load_skill = %s, want the Go skill", tenant, res.Output)
		}
	}
}

// Config.Tenants beats the operator config's [tenants]: the engine keeps
// a pack's skills for the tenant the embedder says. A configuration whose
// tenants cannot work together does not open.
func TestConfigTenants(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, "alpha", "alpha-guide", "SKILL.md")
	os.MkdirAll(filepath.Dir(skill), 0o755)
	os.WriteFile(skill, []byte("---\nname: alpha-guide\ndescription: How to ship alpha widgets.\n---\n\nShip them.\n"), 0o644)
	toml := "[tenants.a]\napi_keys = [\"" + serveconf.HashKey("key-a") + "\"]\npacks = [\"alpha\"]\n" +
		"[tenants.b]\napi_keys = [\"" + serveconf.HashKey("key-b") + "\"]\n"
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	mine, err := tenancy.New(nil, tenancy.Tenant{ID: "a"}, tenancy.Tenant{ID: "b", Packs: []string{"alpha"}})
	if err != nil {
		t.Fatal(err)
	}
	open := func(tenants *tenancy.Set) (*skillhost.Engine, error) {
		e, err := skillhost.Open(context.Background(), skillhost.Config{Operator: cfg, Tenants: tenants, StateDir: testenv.StateDir(),
			IndexPath: filepath.Join(dir, "index.db"), NoBundled: true, NoUserSources: true, PackDirs: []string{filepath.Join(dir, "alpha")}})
		if err == nil {
			t.Cleanup(func() { e.Close(context.Background()) })
		}
		return e, err
	}
	e, err := open(mine)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Tenants().Owner("alpha"); got != tenancy.OwnedBy("b") {
		t.Errorf("with Config.Tenants, alpha is %v's, want tenant b's", got)
	}
	for tenant, want := range map[string]bool{"a": false, "b": true} {
		run, err := e.NewRun(skillhost.RunContext{Tenant: tenant}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := run.Call(context.Background(), "load_skill", json.RawMessage(`{"skill_name":"alpha-guide"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := !res.IsError && strings.Contains(string(res.Output), "Ship them."); got != want {
			t.Errorf("tenant %s loads alpha-guide: %v, want %v (%s)", tenant, got, want, res.Output)
		}
	}
	if e, err := open(nil); err != nil || e.Tenants().Owner("alpha") != tenancy.OwnedBy("a") {
		t.Errorf("without Config.Tenants: %v, the file's tenants not followed", err)
	}
	twice, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(toml+"packs = [\"alpha\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = twice
	if _, err := open(nil); !errors.Is(err, tenancy.ErrBadTenants) {
		t.Errorf("a pack of two tenants: Open = %v, want ErrBadTenants", err)
	}
}
