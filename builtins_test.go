package skillhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// An engine's runs have one skill tool family: list_skills, load_skill,
// read_skill_resource and run_skill_script unless Config.Skills.Tools asks
// for skill_search, skill_get and skill_list, never both; each family
// answers.
func TestEngineRunsHaveOneSkillToolFamily(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		tools      string
		want, none []string
		call, args string
	}{
		{"", registry.SkillToolNames(registry.SkillToolsLoad), registry.SkillToolNames(registry.SkillToolsSearch),
			"load_skill", `{"skill_name":"log-triage"}`},
		{registry.SkillToolsLoad, registry.SkillToolNames(registry.SkillToolsLoad), registry.SkillToolNames(registry.SkillToolsSearch),
			"load_skill", `{"skill_name":"log-triage"}`},
		{registry.SkillToolsSearch, registry.SkillToolNames(registry.SkillToolsSearch), registry.SkillToolNames(registry.SkillToolsLoad),
			"skill_get", `{"names":["log-triage"]}`},
	} {
		t.Run("tools="+c.tools, func(t *testing.T) {
			e := open(t, skillhost.Config{Skills: registry.SkillsConfig{Tools: c.tools}})
			run, err := e.NewRun(skillhost.RunContext{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range c.want {
				if !run.Visible(name) {
					t.Errorf("%s is not in a new run's catalog", name)
				}
			}
			for _, name := range c.none {
				if _, err := e.Tool(name); err == nil {
					t.Errorf("%s is registered beside the other family", name)
				}
				if res, err := run.Call(ctx, name, json.RawMessage(`{}`), nil); err == nil {
					t.Errorf("%s answers: %+v", name, res)
				}
			}
			res, err := run.Call(ctx, c.call, json.RawMessage(c.args), nil)
			if err != nil || res.IsError || !strings.Contains(string(res.Output), "log-triage") {
				t.Errorf("%s: %+v, %v", c.call, res, err)
			}
		})
	}
	if _, err := skillhost.Open(ctx, skillhost.Config{StateDir: t.TempDir(), NoUserSources: true, Skills: registry.SkillsConfig{Tools: "both"}}); !errors.Is(err, skillhost.ErrBadConfig) {
		t.Errorf("Skills.Tools both: %v, want ErrBadConfig", err)
	}
}

// [skill_discovery] tools picks the family when the embedder leaves
// Config.Skills.Tools empty; the embedder's choice wins over the file's.
func TestSkillToolsFromTheOperatorConfig(t *testing.T) {
	op, err := packs.ParseConfig(packs.ConfigFile, []byte("[skill_discovery]\ntools = \"search\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ embedder, want string }{
		{"", registry.SkillSearchName},
		{registry.SkillToolsLoad, registry.LoadSkillName},
		{registry.SkillToolsSearch, registry.SkillSearchName},
	} {
		e := open(t, skillhost.Config{Operator: op, Skills: registry.SkillsConfig{Tools: c.embedder}})
		names := []string{}
		for _, tl := range e.Tools() {
			names = append(names, tl.Name)
		}
		if _, err := e.Tool(c.want); err != nil {
			t.Errorf("file search, Config %q: no %s in %v", c.embedder, c.want, names)
		}
		other := registry.LoadSkillName
		if c.want == other {
			other = registry.SkillSearchName
		}
		if _, err := e.Tool(other); err == nil {
			t.Errorf("file search, Config %q: %s beside %s", c.embedder, other, c.want)
		}
	}
}

// An engine's runs have skillhost's own tools from the start: tool_search
// over the index, the skill tools over the catalog's skills and the
// embedder's Go skills; a search shows only what the run may find.
func TestEngineRunsHaveTheBuiltins(t *testing.T) {
	greet := skillhost.Skill{
		Name:         "greeter",
		Description:  "Greets people by name.",
		Instructions: "Call the hello script with a name.",
		Scripts: []registry.SkillScript{{Name: "hello", Run: func(_ context.Context, args map[string]any) (any, error) {
			return "hello, " + args["name"].(string), nil
		}}},
	}
	e := open(t, skillhost.Config{GoSkills: []skillhost.Skill{greet}})
	ctx := context.Background()
	run, err := e.NewRun(skillhost.RunContext{Tenant: "acme"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	visible := map[string]bool{}
	for _, tool := range run.Tools() {
		visible[tool.Name] = true
	}
	for _, name := range []string{"tool_search", "list_skills", "load_skill", "read_skill_resource", "run_skill_script"} {
		if !visible[name] {
			t.Errorf("built-in %s is not in a new run's catalog", name)
		}
	}
	res, err := run.Call(ctx, "tool_search", json.RawMessage(`{"query":"slugify","search_type":"exact"}`), nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), `"name":"slugify"`) {
		t.Fatalf("tool_search slugify: %+v, %v", res, err)
	}
	res, err = run.Call(ctx, "run_skill_script", json.RawMessage(`{"skill_name":"greeter","script_name":"hello","args":{"name":"Ada"}}`), nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), "hello, Ada") {
		t.Errorf("run_skill_script of a Go skill: %+v, %v", res, err)
	}
	res, err = run.Call(ctx, "list_skills", nil, nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), "greeter") || !strings.Contains(string(res.Output), "log-triage") {
		t.Errorf("list_skills: %+v, %v", res, err)
	}
	// A run whose policy hides slugify cannot find it, even by name.
	hidden, err := e.NewRun(skillhost.RunContext{Tenant: "acme"}, &skillhost.RunOptions{Policy: registry.VisibilityFunc(func(_ registry.RunContext, tool *registry.Tool) bool {
		return tool.Name != "slugify"
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`{"query":"slugify","search_type":"exact"}`, `{"query":"slug"}`, `{"query":".*","search_type":"regex","limit":20}`} {
		res, err := hidden.Call(ctx, "tool_search", json.RawMessage(q), nil)
		var found struct{ Tools []struct{ Name string } }
		if err != nil || res.IsError || json.Unmarshal(res.Output, &found) != nil {
			t.Fatalf("tool_search %s: %+v, %v", q, res, err)
		}
		for _, tool := range found.Tools {
			if tool.Name == "slugify" {
				t.Errorf("tool_search %s under a policy hiding slugify found it: %s", q, res.Output)
			}
		}
	}
}

// The index's events reach Config.Events with the registry's: one stream.
func TestOneEventStream(t *testing.T) {
	var mu sync.Mutex
	names := map[string]int{}
	sink := registry.SinkFunc(func(_ context.Context, ev registry.Event) {
		mu.Lock()
		names[ev.Name]++
		mu.Unlock()
	})
	e := open(t, skillhost.Config{Events: sink})
	run, err := e.NewRun(skillhost.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Call(context.Background(), "tool_search", json.RawMessage(`{"query":"count words"}`), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"tool_search_query", registry.EventToolCall, "skill_pack_loaded"} {
		if names[name] == 0 {
			t.Errorf("no %s event in %v", name, names)
		}
	}
}

// A Go skill is found by skill_search and read by skill_get like a file
// skill, and replaces the file skill of its name there too.
func TestGoSkillsAreSearchable(t *testing.T) {
	e := open(t, skillhost.Config{Skills: registry.SkillsConfig{Tools: registry.SkillToolsSearch}, GoSkills: []skillhost.Skill{
		{Name: "invoice-audit", Description: "Audit supplier invoices against purchase orders and flag mismatched totals.",
			Instructions: "Compare each invoice line with its purchase order."},
		{Name: "log-triage", Description: "Triage logs the Go way.", Instructions: "Instructions written in Go."},
	}})
	ctx := context.Background()
	run, err := e.NewRun(skillhost.RunContext{Tenant: "acme"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Call(ctx, "skill_search", json.RawMessage(`{"query":"check supplier invoices against purchase orders"}`), nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), "invoice-audit") {
		t.Fatalf("skill_search for a Go skill: %+v, %v", res, err)
	}
	res, err = run.Call(ctx, "skill_get", json.RawMessage(`{"names":["log-triage"]}`), nil)
	if err != nil || res.IsError || !strings.Contains(string(res.Output), "Instructions written in Go.") {
		t.Errorf("skill_get of a Go skill replacing a file skill: %+v, %v", res, err)
	}
}
