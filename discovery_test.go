package skillhost_test

import (
	"context"
	"encoding/json"
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

// Skills stored for one tenant's project are never seen from another's,
// even through the same index file.
func TestSkillScopes(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "rotate.skill.yaml"), []byte("title: Rotate the acme signing key\ntrigger: rotate the acme signing key\nsteps: [Open the vault, Rotate the key]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(t.TempDir(), "index.db")
	a := open(t, skillhost.Config{NoBundled: true, PackDirs: []string{ws}, IndexPath: idx, Scope: index.Scope{TenantID: "t1", ProjectID: "p1"}})
	res, err := a.SearchSkills(ctx, index.SkillQuery{Query: "rotate acme signing key"})
	if err != nil || len(res.Skills) != 1 {
		t.Fatalf("own scope: %+v %v", res, err)
	}
	name := res.Skills[0].Name
	a.Close(ctx)

	b := open(t, skillhost.Config{NoBundled: true, IndexPath: idx, Scope: index.Scope{TenantID: "t2", ProjectID: "p1"}})
	for _, st := range []string{"fts", "regex", "exact"} {
		q := "rotate acme signing key"
		if st != "fts" {
			q = name
		}
		res, err := b.SearchSkills(ctx, index.SkillQuery{Query: q, SearchType: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Skills) != 0 {
			t.Errorf("%s search from another tenant found %+v", st, res.Skills)
		}
	}
	got, err := b.GetSkills(ctx, index.SkillGetRequest{Names: []string{name}})
	if err != nil || len(got.Skills) != 0 || len(got.Missing) != 1 {
		t.Errorf("skill_get from another tenant: %+v %v", got, err)
	}
}

// Every skill text an engine hands out is redacted by default: search
// hits, fetched skills, listings, pre-flight blocks and the directory.
func TestDiscoveryRedactsEveryAnswer(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	skill := "title: Page the on-call engineer oncall@example.com\n" +
		"trigger: page the on-call engineer at oncall@example.com or +44 20 7946 0958\n" +
		"steps: [Send the page with token sk-proj-abcdefghijklmnop1234]\n"
	if err := os.WriteFile(filepath.Join(ws, "page.skill.yaml"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"oncall@example.com", "7946 0958", "sk-proj-abcdefghijklmnop1234"}
	check := func(t *testing.T, what string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s shows %q: %s", what, s, b)
			}
		}
	}
	e := open(t, skillhost.Config{NoBundled: true, PackDirs: []string{ws}})
	for _, st := range []string{"fts", "regex"} {
		q := "page the on-call engineer"
		if st == "regex" {
			q = "on-call"
		}
		res, err := e.SearchSkills(ctx, index.SkillQuery{Query: q, SearchType: st})
		if err != nil || len(res.Skills) != 1 {
			t.Fatalf("%s search: %+v %v", st, res, err)
		}
		check(t, st+" skill_search", res)
		if !strings.Contains(res.Skills[0].Trigger, "[REDACTED_EMAIL]") {
			t.Errorf("trigger not redacted: %q", res.Skills[0].Trigger)
		}
	}
	res, _ := e.SearchSkills(ctx, index.SkillQuery{Query: "on-call", SearchType: "regex"})
	name := res.Skills[0].Name
	got, err := e.GetSkills(ctx, index.SkillGetRequest{Names: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "skill_get", got)
	list, err := e.ListSkills(ctx, index.SkillListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "skill_list", list)
	rel, err := e.Relevant(ctx, index.RelevantRequest{Task: "page the on-call engineer"})
	if err != nil || len(rel.Skills) != 1 {
		t.Fatalf("relevant: %+v %v", rel, err)
	}
	check(t, "pre-flight", rel)
	dir, err := e.Directory(ctx, index.DirectoryConfig{IncludeFields: []string{"name", "title", "trigger"}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "directory", dir.Render())

	// Turned off, the search shows the stored text.
	raw := open(t, skillhost.Config{NoBundled: true, PackDirs: []string{ws}, Index: &index.Options{DisableRedaction: true}})
	res, err = raw.SearchSkills(ctx, index.SkillQuery{Query: "on-call", SearchType: "regex"})
	if err != nil || len(res.Skills) != 1 || !strings.Contains(res.Skills[0].Trigger, "oncall@example.com") {
		t.Errorf("without redaction: %+v %v", res, err)
	}
}
