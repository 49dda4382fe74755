package skillhost_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/index"
)

func TestSearchBundled(t *testing.T) {
	ctx := context.Background()
	e := open(t, skillhost.Config{})
	res, err := e.SearchTools(ctx, index.ToolQuery{Query: "turn a title into a url slug"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 || res.Tools[0].Name != "slugify" {
		t.Errorf("tool_search = %+v, want slugify first", res.Tools)
	}
	sk, err := e.SearchSkills(ctx, index.SkillQuery{Query: "why is my service failing, check the logs"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sk.Skills) == 0 || sk.Skills[0].Name != "log-triage" {
		t.Errorf("skill_search = %+v, want log-triage first", sk.Skills)
	}
	got, err := e.GetSkills(ctx, index.SkillGetRequest{Names: []string{"log-triage"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Skills) != 1 || !strings.Contains(got.FormattedContext, "search_files") {
		t.Errorf("skill_get = %+v", got)
	}
	if _, err := e.Skill("no-such-skill"); err == nil {
		t.Error("Skill(no-such-skill) succeeded")
	}
}

// A skill naming a tool the engine does not have never shows the name; a
// hidden tool is never found by search, not even by its exact name.
func TestDiscoveryHidesUnknownTools(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	skill := "---\nname: deploy-helper\ndescription: Deploy the service with the deploy tool.\n---\n\nCall `secret_deployer_v2` with the build id, then check with `slugify`.\n"
	if err := os.MkdirAll(filepath.Join(ws, "deploy-helper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "deploy-helper", "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	pack := writePack(t, "name: hid\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: secret_deployer_v2, hidden: true, description: deploys}]\n", "wat/echo.wasm", "m.wasm")
	e := open(t, skillhost.Config{PackDirs: []string{pack, ws}})
	for _, st := range []string{"fts", "regex", "exact"} {
		res, err := e.SearchTools(ctx, index.ToolQuery{Query: "secret_deployer_v2", SearchType: st})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Tools {
			if h.Name == "secret_deployer_v2" {
				t.Errorf("%s search found the hidden tool", st)
			}
		}
	}
	got, err := e.GetSkills(ctx, index.SkillGetRequest{Names: []string{"deploy-helper"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.FormattedContext, "secret_deployer_v2") {
		t.Errorf("skill_get leaks the hidden tool:\n%s", got.FormattedContext)
	}
	if !strings.Contains(got.FormattedContext, "slugify") {
		t.Errorf("skill_get dropped a visible tool:\n%s", got.FormattedContext)
	}
}
