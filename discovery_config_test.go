package skillhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// stubTool is a native tool that answers {}.
type stubTool struct{ desc packs.ToolSpec }

func (s stubTool) Describe() packs.ToolSpec { return s.desc }

func (s stubTool) Execute(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func stub(name string) skillhost.Native {
	return stubTool{packs.ToolSpec{Name: name, Description: "Does " + name + "."}}
}

// withConfig opens an engine on the native tools only, with the operator
// config toml (written to a file of its own) and cfg.
func withConfig(t *testing.T, toml string, cfg skillhost.Config) *skillhost.Engine {
	t.Helper()
	file := filepath.Join(t.TempDir(), "skillhost.toml")
	if err := os.WriteFile(file, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ConfigFile = file
	cfg.NoBundled = true
	return open(t, cfg)
}

func visibleNames(t *testing.T, e *skillhost.Engine, rc skillhost.RunContext) []string {
	t.Helper()
	run, err := e.NewRun(rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range run.Tools() {
		if tool.Kind != registry.KindBuiltin { // the built-ins are always there
			out = append(out, tool.Name)
		}
	}
	return out
}

// withoutBuiltins drops skillhost's own tools from a run's catalog.
func withoutBuiltins(tools []*registry.Tool) []*registry.Tool {
	var out []*registry.Tool
	for _, t := range tools {
		if t.Kind != registry.KindBuiltin {
			out = append(out, t)
		}
	}
	return out
}

// [tool_search] reaches the runs: the always-loaded patterns and the
// default loading mode decide what a run sees from the start, and a field
// the embedder sets wins over the file.
func TestToolSearchConfigReachesRuns(t *testing.T) {
	natives := []skillhost.Native{stub("note_add"), stub("note_list"), stub("clock")}

	// Native tools are deferred by default: a run starts with none.
	e := withConfig(t, "", skillhost.Config{Tools: natives})
	if got := visibleNames(t, e, skillhost.RunContext{}); len(got) != 0 {
		t.Errorf("without a config a run sees %v", got)
	}

	e = withConfig(t, "[tool_search]\nalways_loaded_patterns = [\"note_*\"]\n", skillhost.Config{Tools: natives})
	if diff := cmp.Diff([]string{"note_add", "note_list"}, visibleNames(t, e, skillhost.RunContext{})); diff != "" {
		t.Errorf("always_loaded_patterns (-want +got):\n%s", diff)
	}

	e = withConfig(t, "[tool_search]\ndefault_loading_mode = \"always\"\n", skillhost.Config{Tools: natives})
	if diff := cmp.Diff([]string{"clock", "note_add", "note_list"}, visibleNames(t, e, skillhost.RunContext{})); diff != "" {
		t.Errorf("default_loading_mode always (-want +got):\n%s", diff)
	}
	if tool, err := e.Tool("clock"); err != nil || tool.Loading != packs.LoadingAlways {
		t.Errorf("clock: %+v %v", tool, err)
	}

	// The embedder's settings win over the file's.
	e = withConfig(t, "[tool_search]\ndefault_loading_mode = \"always\"\nalways_loaded_patterns = [\"note_*\"]\n", skillhost.Config{
		Tools: natives, ToolSearch: registry.ToolSearchConfig{DefaultLoading: packs.LoadingDeferred, AlwaysLoaded: []string{"clock"}},
	})
	if diff := cmp.Diff([]string{"clock"}, visibleNames(t, e, skillhost.RunContext{})); diff != "" {
		t.Errorf("embedder's catalog over the file's (-want +got):\n%s", diff)
	}
}

// activation_scope = "session" makes a session id a requirement of every
// run (the engine's own run has one).
func TestToolSearchSessionActivation(t *testing.T) {
	ctx := context.Background()
	e := withConfig(t, "[tool_search]\nactivation_scope = \"session\"\n", skillhost.Config{Tools: []skillhost.Native{stub("note_add")}})
	if _, err := e.NewRun(skillhost.RunContext{Tenant: "t"}, nil); !errors.Is(err, skillhost.ErrBadConfig) {
		t.Fatalf("a run without a session: %v, want ErrBadConfig", err)
	}
	a, err := e.NewRun(skillhost.RunContext{Tenant: "t", Session: "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Activate(ctx, "note_add", "test"); err != nil {
		t.Fatal(err)
	}
	b, err := e.NewRun(skillhost.RunContext{Tenant: "t", Session: "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Visible("note_add") {
		t.Error("a later run of the session does not see the tool activated before")
	}
	if res, err := e.Call(ctx, "note_add", nil, nil); err != nil || res.IsError {
		t.Errorf("Engine.Call under session activation: %+v %v", res, err)
	}

	// The embedder's scope wins: runs need no session.
	e = withConfig(t, "[tool_search]\nactivation_scope = \"session\"\n", skillhost.Config{ToolSearch: registry.ToolSearchConfig{ActivationScope: registry.ScopeRun}})
	if _, err := e.NewRun(skillhost.RunContext{}, nil); err != nil {
		t.Errorf("run scope set by the embedder: %v", err)
	}
}

// enabled = false: every tool is in view, and no tool_search is
// registered; max_search_results caps a search; rebuild_cache_on_init
// rewrites the tool index at Open.
func TestToolSearchSwitchAndLimits(t *testing.T) {
	ctx := context.Background()
	natives := []skillhost.Native{stub("note_add"), stub("clock"), stub(registry.ToolSearchName)}
	e := withConfig(t, "[tool_search]\nenabled = false\n", skillhost.Config{Tools: natives})
	if diff := cmp.Diff([]string{"clock", "note_add"}, visibleNames(t, e, skillhost.RunContext{})); diff != "" {
		t.Errorf("tool search off (-want +got):\n%s", diff)
	}
	if _, err := e.Tool(registry.ToolSearchName); !errors.Is(err, skillhost.ErrToolNotFound) {
		t.Errorf("tool_search with tool search off: %v", err)
	}

	var many []skillhost.Native
	for _, n := range []string{"note_a", "note_b", "note_c", "note_d", "note_e"} {
		many = append(many, stub(n))
	}
	search := func(e *skillhost.Engine, limit int) int {
		t.Helper()
		res, err := e.SearchTools(ctx, index.ToolQuery{Query: "^note_", SearchType: "regex", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Tools)
	}
	e = withConfig(t, "[tool_search]\nmax_search_results = 2\n", skillhost.Config{Tools: many})
	if n, m := search(e, 20), search(e, 0); n != 2 || m != 2 {
		t.Errorf("max_search_results 2: limit 20 gives %d, no limit %d", n, m)
	}
	e = withConfig(t, "[tool_search]\nmax_search_results = 2\n", skillhost.Config{Tools: many, ToolSearch: registry.ToolSearchConfig{MaxResults: 3}})
	if n := search(e, 20); n != 3 {
		t.Errorf("the embedder's MaxResults 3: %d results", n)
	}
	if n := search(withConfig(t, "", skillhost.Config{Tools: many}), 20); n != 5 {
		t.Errorf("no cap: %d results", n)
	}

	rebuilds := func(toml string) int {
		t.Helper()
		n := 0
		opts := &index.Options{OnEvent: func(ev index.Event) {
			if ev.Name == index.EventToolsSynced && ev.Fields["rebuild"] == true {
				n++
			}
		}}
		withConfig(t, toml, skillhost.Config{Tools: many, Index: opts})
		return n
	}
	if n := rebuilds("[tool_search]\nrebuild_cache_on_init = true\n"); n != 1 {
		t.Errorf("rebuild_cache_on_init: %d rebuilds at Open", n)
	}
	if n := rebuilds(""); n != 0 {
		t.Errorf("by default: %d rebuilds at Open", n)
	}
}

// [tool_examples] reaches the renderings through Engine.RenderOptions.
func TestToolExamplesConfig(t *testing.T) {
	tool := stubTool{packs.ToolSpec{Name: "word_count", Description: "Count words.", Loading: packs.LoadingAlways,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Examples: []packs.Example{
			{Args: json.RawMessage(`{"text":"a b"}`), Description: "two words", Tags: []string{"common"}},
			{Args: json.RawMessage(`{"text":""}`), Description: "none", Tags: []string{"minimal"}},
		}}}
	e := withConfig(t, "", skillhost.Config{Tools: []skillhost.Native{tool}})
	if got := e.RenderOptions(); got != (skillhost.RenderOptions{}) {
		t.Errorf("default render options %+v", got)
	}
	e = withConfig(t, "[tool_examples]\nenabled = true\nmax_examples_per_tool = 1\ninclude_descriptions = false\n",
		skillhost.Config{Tools: []skillhost.Native{tool}})
	want := skillhost.RenderOptions{Examples: true, MaxExamples: 1, OmitExampleDescriptions: true}
	if got := e.RenderOptions(); got != want {
		t.Errorf("render options %+v, want %+v", got, want)
	}
	run, err := e.NewRun(skillhost.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := registry.OpenAITools(withoutBuiltins(run.Tools()), e.RenderOptions())
	if len(got) != 1 || got[0].Function.Description != "Count words.\n\nExamples:\n{\"text\":\"\"}" {
		t.Errorf("rendering: %+v", got)
	}
	e = withConfig(t, "[tool_examples]\nmax_examples_per_tool = 1\n",
		skillhost.Config{Tools: []skillhost.Native{tool}, ToolExamples: registry.ExamplesConfig{Enabled: &on, MaxPerTool: 2}})
	if got := e.RenderOptions(); got != (skillhost.RenderOptions{Examples: true, MaxExamples: 2}) {
		t.Errorf("the embedder's options over the file's: %+v", got)
	}
	// The embedder switches off what the file switches on.
	e = withConfig(t, "[tool_examples]\nenabled = true\ninclude_descriptions = false\n",
		skillhost.Config{Tools: []skillhost.Native{tool}, ToolExamples: registry.ExamplesConfig{Enabled: &off, IncludeDescriptions: &on}})
	if got := e.RenderOptions(); got != (skillhost.RenderOptions{}) {
		t.Errorf("the embedder's switches over the file's: %+v", got)
	}
}

var on, off = true, false

// The embedder's [tool_search] settings win over the file's, a switch
// the file turns on and the embedder turns off included.
func TestToolSearchEmbedderWins(t *testing.T) {
	natives := []skillhost.Native{stub("note_add"), stub("clock")}
	e := withConfig(t, "[tool_search]\nenabled = true\n", skillhost.Config{Tools: natives, ToolSearch: registry.ToolSearchConfig{Enabled: &off}})
	if diff := cmp.Diff([]string{"clock", "note_add"}, visibleNames(t, e, skillhost.RunContext{})); diff != "" {
		t.Errorf("tool search switched off by the embedder (-want +got):\n%s", diff)
	}
	if _, err := e.Tool(registry.ToolSearchName); !errors.Is(err, skillhost.ErrToolNotFound) {
		t.Errorf("tool_search switched off by the embedder: %v", err)
	}
	e = withConfig(t, "[tool_search]\nenabled = false\n", skillhost.Config{Tools: natives, ToolSearch: registry.ToolSearchConfig{Enabled: &on}})
	if _, err := e.Tool(registry.ToolSearchName); err != nil {
		t.Errorf("tool_search switched on by the embedder: %v", err)
	}
	n := 0
	opts := &index.Options{OnEvent: func(ev index.Event) {
		if ev.Name == index.EventToolsSynced && ev.Fields["rebuild"] == true {
			n++
		}
	}}
	withConfig(t, "[tool_search]\nrebuild_cache_on_init = true\n", skillhost.Config{Tools: natives, Index: opts, ToolSearch: registry.ToolSearchConfig{RebuildIndex: &off}})
	if n != 0 {
		t.Errorf("rebuild_cache_on_init switched off by the embedder: %d rebuilds", n)
	}
}

// writeSkill writes a playbook skill into a new workspace folder.
func writeSkill(t *testing.T, file, body string) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, file), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

const pageSkill = "title: Page the on-call engineer\n" +
	"trigger: page the on-call engineer about an outage\n" +
	"steps:\n" +
	"  - Write to oncall@example.com with the outage summary, the affected services, the first alert time and the dashboards that show it.\n" +
	"  - Wait ten minutes for an acknowledgement, then call the secondary on-call engineer and repeat the summary in full.\n" +
	"  - Open an incident record with the timeline, the people paged, the customer impact and the next update time.\n" +
	"  - Post the incident link in the operations channel and pin it until the incident is resolved and reviewed.\n" +
	"failure_modes: [Nobody answers the page within thirty minutes, The paging provider is down as well]\n" +
	"preconditions: [An outage has been confirmed by at least two independent signals]\n"

// [skill_discovery] reaches retrieval, the directory, redaction, the
// scope pack skills are stored at, and the registry.
func TestSkillDiscoveryConfig(t *testing.T) {
	ctx := context.Background()
	ws := writeSkill(t, "page.skill.yaml", pageSkill)
	relevant := func(e *skillhost.Engine) *index.RelevantResult {
		t.Helper()
		res, err := e.Relevant(ctx, index.RelevantRequest{Task: "page the on-call engineer about an outage"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	full := relevant(withConfig(t, "", skillhost.Config{PackDirs: []string{ws}}))
	if len(full.Skills) != 1 || full.WasSummarized || full.FinalTokensEst <= 100 {
		t.Fatalf("default retrieval: %+v", full)
	}
	if !strings.Contains(full.FormattedContext, "[REDACTED_EMAIL]") || strings.Contains(full.FormattedContext, "oncall@example.com") {
		t.Errorf("default retrieval is not redacted:\n%s", full.FormattedContext)
	}

	e := withConfig(t, "[skill_discovery]\nmax_tokens = 100\nredact_pii = false\n", skillhost.Config{PackDirs: []string{ws}})
	small := relevant(e)
	if !small.WasSummarized || small.FinalTokensEst > 100 {
		t.Errorf("max_tokens 100: %d tokens, summarized %t", small.FinalTokensEst, small.WasSummarized)
	}
	got, err := e.GetSkills(ctx, index.SkillGetRequest{Names: []string{small.Skills[0].Name}})
	if err != nil || !strings.Contains(got.FormattedContext, "oncall@example.com") {
		t.Errorf("redact_pii false: %v\n%+v", err, got)
	}

	// Off: nothing retrieved, no directory, no skill tools for a model;
	// the embedder still reaches the skills.
	natives := []skillhost.Native{stub(registry.SkillGetName), stub(registry.SkillSearchName), stub("note_add")}
	e = withConfig(t, "[skill_discovery]\nenabled = false\n", skillhost.Config{PackDirs: []string{ws}, Tools: natives})
	if res := relevant(e); len(res.Skills) != 0 || res.FormattedContext != "" {
		t.Errorf("skill discovery off retrieves %+v", res)
	}
	if d, err := e.Directory(ctx, index.DirectoryConfig{}); err != nil || len(d.Entries) != 0 || d.Render() != "" {
		t.Errorf("skill discovery off: directory %+v %v", d, err)
	}
	var names []string
	for _, tool := range e.Tools() {
		names = append(names, tool.Name)
	}
	if slices.Contains(names, registry.SkillGetName) || slices.Contains(names, registry.SkillSearchName) || !slices.Contains(names, "note_add") {
		t.Errorf("skill discovery off: tools %v", names)
	}
	if res, err := e.SearchSkills(ctx, index.SkillQuery{Query: "page on-call"}); err != nil || len(res.Skills) != 1 {
		t.Errorf("the embedder's skill search with discovery off: %+v %v", res, err)
	}
}

func TestSkillDirectoryConfig(t *testing.T) {
	ctx := context.Background()
	ws := writeSkill(t, "page.skill.yaml", pageSkill)
	dir := func(toml string, cfg skillhost.Config, req index.DirectoryConfig) string {
		t.Helper()
		cfg.PackDirs = []string{ws}
		d, err := withConfig(t, toml, cfg).Directory(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return d.Render()
	}
	if got := dir("", skillhost.Config{}, index.DirectoryConfig{}); !strings.Contains(got, "— Page the on-call engineer: page the on-call") {
		t.Errorf("default directory:\n%s", got)
	}
	names := dir("[skill_discovery.directory]\ninclude_fields = [\"name\"]\n", skillhost.Config{}, index.DirectoryConfig{})
	if !strings.Contains(names, "<skill_directory>") || strings.Contains(names, "Page the on-call engineer") {
		t.Errorf("include_fields name:\n%s", names)
	}
	// A request's own fields win over the configured ones.
	if got := dir("[skill_discovery.directory]\ninclude_fields = [\"name\"]\n", skillhost.Config{}, index.DirectoryConfig{IncludeFields: []string{"title"}}); !strings.Contains(got, "Page the on-call engineer") {
		t.Errorf("the request's fields:\n%s", got)
	}
	if got := dir("[skill_discovery.directory]\nenabled = false\n", skillhost.Config{}, index.DirectoryConfig{}); got != "" {
		t.Errorf("directory off:\n%s", got)
	}
	if got := dir("", skillhost.Config{Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{Enabled: &off}}}}, index.DirectoryConfig{}); got != "" {
		t.Errorf("directory off by the embedder:\n%s", got)
	}
	// The embedder's switches win over the file's, either way.
	if got := dir("[skill_discovery.directory]\nenabled = true\n", skillhost.Config{Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{Enabled: &off}}}}, index.DirectoryConfig{}); got != "" {
		t.Errorf("directory on in the file, off by the embedder:\n%s", got)
	}
	if got := dir("[skill_discovery.directory]\nenabled = false\n", skillhost.Config{Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{Enabled: &on}}}}, index.DirectoryConfig{}); got == "" {
		t.Error("directory off in the file, on by the embedder: empty")
	}
	if got := dir("[skill_discovery]\nenabled = true\n", skillhost.Config{Skills: registry.SkillsConfig{Enabled: &off}}, index.DirectoryConfig{}); got != "" {
		t.Errorf("skill discovery on in the file, off by the embedder:\n%s", got)
	}
	if got := dir("[skill_discovery.directory]\ninclude_fields = [\"name\"]\n", skillhost.Config{Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{DirectoryConfig: index.DirectoryConfig{IncludeFields: []string{"title"}}}}}}, index.DirectoryConfig{}); !strings.Contains(got, "Page the on-call engineer") {
		t.Errorf("the embedder's fields over the file's:\n%s", got)
	}
}

// A pack's skills are stored at its section's scope_mode, else at the
// embedder's Skills.ScopeMode, else at [skill_discovery] scope_mode.
func TestSkillScopeModeDefault(t *testing.T) {
	ctx := context.Background()
	ws := writeSkill(t, "page.skill.yaml", pageSkill)
	scope := index.Scope{TenantID: "t1", ProjectID: "p1"}
	stored := func(toml string, cfg skillhost.Config) string {
		t.Helper()
		cfg.PackDirs, cfg.Scope = []string{ws}, scope
		e := withConfig(t, toml, cfg)
		res, err := e.ListSkills(ctx, index.SkillListRequest{})
		if err != nil || len(res.Skills) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
		return res.Skills[0].ScopeMode
	}
	if got := stored("", skillhost.Config{}); got != packs.ScopeProject {
		t.Errorf("by default: %s", got)
	}
	if got := stored("[skill_discovery]\nscope_mode = \"tenant\"\n", skillhost.Config{}); got != packs.ScopeTenant {
		t.Errorf("[skill_discovery] scope_mode tenant: %s", got)
	}
	if got := stored("[skill_discovery]\nscope_mode = \"tenant\"\n", skillhost.Config{Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{ScopeMode: packs.ScopeGlobal}}}); got != packs.ScopeGlobal {
		t.Errorf("the embedder's global over the file's tenant: %s", got)
	}
	pack := writeSkill(t, "pack.yaml", "name: paging\nversion: 1.0.0\n")
	if err := os.WriteFile(filepath.Join(pack, "page.skill.yaml"), []byte(pageSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	ws = pack
	if got := stored("[packs.paging]\nscope_mode = \"tenant\"\n", skillhost.Config{Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{ScopeMode: packs.ScopeGlobal}}}); got != packs.ScopeTenant {
		t.Errorf("the pack's section over the embedder's default: %s", got)
	}
}

// Settings no request could use are refused by Open.
func TestDiscoveryConfigRefused(t *testing.T) {
	for name, cfg := range map[string]skillhost.Config{
		"max results":   {ToolSearch: registry.ToolSearchConfig{MaxResults: index.MaxLimit + 1}},
		"max tokens":    {Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{MaxTokens: 5}}},
		"scope mode":    {Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{ScopeMode: "session"}}},
		"max entries":   {Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{DirectoryConfig: index.DirectoryConfig{MaxEntries: index.MaxDirectoryEntries + 1}}}}},
		"fields":        {Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{DirectoryConfig: index.DirectoryConfig{IncludeFields: []string{"body"}}}}}},
		"strategy":      {Skills: registry.SkillsConfig{DiscoveryConfig: index.DiscoveryConfig{Directory: index.DirectorySection{DirectoryConfig: index.DirectoryConfig{Strategy: "newest"}}}}},
		"loading":       {ToolSearch: registry.ToolSearchConfig{DefaultLoading: "lazy"}},
		"activation":    {ToolSearch: registry.ToolSearchConfig{ActivationScope: "tenant"}},
		"bad max examp": {Render: skillhost.RenderOptions{MaxExamples: -1}},
		"examples":      {ToolExamples: registry.ExamplesConfig{MaxPerTool: registry.MaxExamples + 1}},
		"mcp revision":  {Render: skillhost.RenderOptions{MCPRevision: "latest"}},
		"always loaded": {ToolSearch: registry.ToolSearchConfig{AlwaysLoaded: []string{"fs_["}}},
	} {
		cfg.NoBundled, cfg.NoUserSources, cfg.Operator = true, true, packs.DefaultConfig()
		cfg.StateDir, cfg.IndexPath = stateDir, filepath.Join(t.TempDir(), "index.db")
		if e, err := skillhost.Open(context.Background(), cfg); err == nil {
			e.Close(context.Background())
			t.Errorf("%s: Open succeeded", name)
		} else if !errors.Is(err, skillhost.ErrBadConfig) && !errors.Is(err, index.ErrBadDirectoryConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// preferred_namespaces orders tools of equal score by pack.
func TestToolSearchPreferredNamespaces(t *testing.T) {
	ctx := context.Background()
	zzz := writePack(t, "name: zzz\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: xa_probe, description: Probes.}]\n", "wat/echo.wasm", "m.wasm")
	aaa := writePack(t, "name: aaa\nmodules:\n  - name: m\n    path: m.wasm\n    tools: [{name: xb_probe, description: Probes.}]\n", "wat/echo.wasm", "m.wasm")
	first := func(toml string, cfg skillhost.Config) string {
		t.Helper()
		cfg.PackDirs = []string{zzz, aaa}
		res, err := withConfig(t, toml, cfg).SearchTools(ctx, index.ToolQuery{Query: "probe", SearchType: "regex"})
		if err != nil || len(res.Tools) != 2 {
			t.Fatalf("%+v %v", res, err)
		}
		return res.Tools[0].Name
	}
	if got := first("", skillhost.Config{}); got != "xa_probe" {
		t.Errorf("by default %s comes first", got)
	}
	if got := first("[tool_search]\npreferred_namespaces = [\"aaa\"]\n", skillhost.Config{}); got != "xb_probe" {
		t.Errorf("preferring aaa: %s comes first", got)
	}
	if got := first("[tool_search]\npreferred_namespaces = [\"aaa\"]\n", skillhost.Config{Index: &index.Options{PreferredNamespaces: []string{"zzz"}}}); got != "xa_probe" {
		t.Errorf("the embedder preferring zzz: %s comes first", got)
	}
}
