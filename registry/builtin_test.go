package registry_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// The golden files of the built-ins are rewritten with -update, defined
// here only when no other test file of the package defines it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func builtinUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const builtinGoldenDir = "../testdata/registry/builtin"

// biTool is a native tool of the tests: it returns its arguments, or what
// fn returns.
type biTool struct {
	d  packs.ToolSpec
	fn func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

func (b biTool) Describe() packs.ToolSpec { return b.d }

func (b biTool) Execute(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if b.fn != nil {
		return b.fn(ctx, args)
	}
	return args, nil
}

// biNatives are the native tools of the built-in tests: deferred tools a
// search can find, one the policy of biPolicy hides, an always-loaded one
// and a hidden one.
func biNatives() []registry.Native {
	return []registry.Native{
		biTool{d: packs.ToolSpec{Name: "web_search", Description: "Search the web for pages about a topic.", Loading: packs.LoadingDeferred}},
		biTool{d: packs.ToolSpec{Name: "web_fetch", Description: "Fetch a web page and return its text.", Loading: packs.LoadingDeferred}},
		biTool{d: packs.ToolSpec{Name: "admin_wipe", Description: "Wipe all data of the account, erase every record.", Loading: packs.LoadingDeferred}},
		biTool{d: packs.ToolSpec{Name: "word_count", Description: "Count the words of a text.", Loading: packs.LoadingAlways}},
		biTool{d: packs.ToolSpec{Name: "secret_probe", Description: "Probe the secret store and wipe data.", Loading: packs.LoadingDeferred, Hidden: true}},
	}
}

// biPolicy hides every tool whose name starts with admin_.
var biPolicy = registry.VisibilityFunc(func(_ registry.RunContext, t *registry.Tool) bool {
	return !strings.HasPrefix(t.Name, "admin_")
})

const biSkillMD = `---
name: pdf-tools
description: Fill and merge PDF forms; questions to owner@example.com. Wipe drafts with admin_wipe.
license: MIT
metadata:
  version: "1.2"
---
# PDF tools

Read references/guide.md first. Extract the fields with ` + "`admin_wipe`" + `, never with secret_probe.
Then count them with word_count.
`

const biPlaybook = `name: restart-service
title: Restart a stuck service
trigger: A service stopped answering; clear its state with admin_wipe if asked.
task_type: domain
steps:
  - Save the last 500 log lines.
  - Restart it.
failure_modes:
  - It fails again at once.
`

// biSecret is the content of a file next to the skills, outside every
// skill folder: no built-in may ever return it.
const biSecret = "TOP-SECRET-MARKER"

// biWriteSource writes a source folder: with the test pack when withPack,
// the pdf-tools agent skill with a reference, a binary asset and two
// scripts, a playbook skill, and a secret outside the skills.
func biWriteSource(t testing.TB, withPack bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	files := map[string]string{
		"secret.txt":                              biSecret,
		"skills/secret.txt":                       biSecret,
		"skills/pdf-tools/SKILL.md":               biSkillMD,
		"skills/pdf-tools/references/guide.md":    "# Guide\n\nStep one: open the form.\n",
		"skills/pdf-tools/assets/logo.bin":        "\x89PNG\x00\x01\x02\xff",
		"skills/pdf-tools/scripts/fill.wasm":      "\x00asm\x01\x00\x00\x00",
		"skills/pdf-tools/scripts/merge.py":       "print('merged')\n",
		"skills/pdf-tools/references/big.txt":     strings.Repeat("x", 4096),
		"skills/ops/restart-service.skill.yaml":   biPlaybook,
		"skills/pdf-tools/references/nested/a.md": "nested\n",
	}
	if withPack {
		files["pack.yaml"] = testPack
		wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "tool_call.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		files["m.wasm"] = string(wasm)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// biCSVSkill is a programmatic skill with resources and scripts.
func biCSVSkill() registry.Skill {
	return registry.Skill{
		Name:         "csv-helper",
		Description:  "Summarise CSV files; wipe old exports with `admin_wipe` first.",
		Instructions: "# CSV helper\n\nRun the `stats` script with the CSV text. Never call admin_wipe; search with web_search.\n",
		License:      "Apache-2.0",
		Metadata:     map[string]string{"author": "data-team"},
		Resources: []registry.SkillResource{
			{Name: "schema.md", Description: "The columns.", Content: []byte("| col | type |\n")},
			{Name: "live/rows.json", Description: "Made when read.", Load: func(context.Context) ([]byte, error) { return []byte(`{"rows":3}`), nil }},
			{Name: "broken.txt", Load: func(context.Context) ([]byte, error) { return nil, errors.New("disk on fire") }},
		},
		Scripts: []registry.SkillScript{
			{
				Name: "stats", Description: "Count the rows and columns of a CSV text.",
				InputSchema: json.RawMessage(`{"type":"object","required":["csv"],"additionalProperties":false,"properties":{"csv":{"type":"string"},"header":{"type":"boolean"}}}`),
				Run: func(_ context.Context, args map[string]any) (any, error) {
					lines := strings.Split(strings.TrimSpace(args["csv"].(string)), "\n")
					rows := len(lines)
					if h, _ := args["header"].(bool); h {
						rows--
					}
					return map[string]any{"rows": rows, "columns": len(strings.Split(lines[0], ","))}, nil
				},
			},
			{Name: "echo", Run: func(_ context.Context, args map[string]any) (any, error) {
				return fmt.Sprintf("text: %v", args["text"]), nil
			}},
			{Name: "fail", Run: func(context.Context, map[string]any) (any, error) { return nil, errors.New("boom") }},
			{Name: "denied", Run: func(context.Context, map[string]any) (any, error) {
				return nil, &registry.ToolError{Code: abi.CodePermissionDenied, Message: "no access to the exports"}
			}},
			{Name: "search", Description: "Searches the web through the run.", Run: func(ctx context.Context, args map[string]any) (any, error) {
				run := registry.RunFrom(ctx)
				if run == nil {
					return nil, errors.New("no run in the context")
				}
				q, _ := json.Marshal(map[string]any{"q": args["q"]})
				res, err := run.Call(ctx, "web_search", q, nil)
				if err != nil {
					return nil, err
				}
				return res.Output, nil
			}},
			{Name: "unencodable", Run: func(context.Context, map[string]any) (any, error) { return func() {}, nil }},
		},
	}
}

type biOpts struct {
	builtins   func(*registry.BuiltinOptions)
	withPack   bool
	disableFTS bool
	set        registry.SkillSetOptions
	skills     []registry.Skill
}

// allBuiltins returns every built-in over bo's index and skill set:
// tool_search and both skill tool families, which no engine shows side by
// side, so that one registry tests them all.
func allBuiltins(bo registry.BuiltinOptions) []registry.Native {
	bo.SkillTools = registry.SkillToolsLoad
	out := registry.Builtins(bo)
	bo.SkillTools, bo.NoToolSearch = registry.SkillToolsSearch, true
	return append(out, registry.Builtins(bo)...)
}

// biEnv is a registry with every built-in over an index and a skill set
// (allBuiltins), unless biOpts.builtins picks a skill tool family.
type biEnv struct {
	reg *registry.Registry
	idx *index.Store
	set *registry.SkillSet
	cat *packs.Catalog
	dir string
}

func biSetup(t testing.TB, o biOpts) *biEnv {
	t.Helper()
	ctx := context.Background()
	e := &biEnv{dir: biWriteSource(t, o.withPack)}
	cat, err := packs.LoadCatalog(ctx, []packs.SourceSpec{{Name: packs.SourceInstalled, Dir: e.dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.cat = cat
	e.idx, err = index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), &index.Options{DisableFTS: o.disableFTS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.idx.Close() })
	setOpts := o.set
	if setOpts.Files == nil {
		setOpts.Files = cat.Skills
	}
	skills := o.skills
	if skills == nil {
		skills = []registry.Skill{biCSVSkill()}
	}
	e.set, err = registry.NewSkillSet(setOpts, skills...)
	if err != nil {
		t.Fatal(err)
	}
	bo := registry.BuiltinOptions{
		Index:  e.idx,
		Scope:  func(rc registry.RunContext) index.Scope { return index.Scope{TenantID: rc.Tenant} },
		Skills: e.set,
	}
	if o.builtins != nil {
		o.builtins(&bo)
	}
	builtins := registry.Builtins(bo)
	if bo.SkillTools == "" {
		builtins = allBuiltins(bo)
	}
	opts := registry.Options{Natives: biNatives(), Builtins: builtins}
	if o.withPack {
		h, err := host.New(ctx, host.NewConfig().WithCacheDir(testenv.CacheDir()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close(ctx) })
		opts.Host = h
		opts.Grants = map[string]host.Grant{"t": {Tools: []string{"again"}}}
	}
	e.reg, err = registry.New(ctx, cat, opts)
	if err != nil {
		t.Fatal(err)
	}
	if p := e.reg.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	// The index holds what the engine would put there: every tool of the
	// registry, the catalog's skills at global scope, and a skill of
	// tenant a.
	var tools []index.ToolRecord
	for _, tl := range e.reg.Tools() {
		tools = append(tools, index.ToolRecord{Name: tl.Name, Description: tl.Description, Namespace: tl.Pack, Tags: tl.Tags, LoadingMode: tl.Loading})
	}
	if _, err := e.idx.SyncTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	byPack := map[string][]index.SkillRecord{}
	for _, se := range cat.Skills() {
		s := se.Skill
		byPack[s.Pack] = append(byPack[s.Pack], index.SkillRecord{Name: s.Name, Title: s.Title, Description: s.Description,
			Trigger: s.Trigger, TaskType: s.TaskType, Steps: s.Steps, FailureModes: s.FailureModes,
			Instructions: s.Instructions, Origin: index.OriginPack})
	}
	for p, skills := range byPack {
		if _, err := e.idx.LoadPack(ctx, p, skills, index.PackOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.idx.LoadPack(ctx, "tenant-pack", []index.SkillRecord{{Name: "tenant-only", Description: "Close the books of tenant a at month end.",
		Steps: []string{"Export the ledger."}, Origin: index.OriginPack}}, index.PackOptions{Scope: index.Scope{TenantID: "a"}}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *biEnv) run(t testing.TB, rc registry.RunContext, policy registry.VisibilityPolicy) *registry.Run {
	t.Helper()
	run, err := e.reg.NewRun(rc, &registry.RunOptions{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// biCall calls a tool in run; args is a JSON text or a value to encode.
// A Go error fails the test: the built-ins report failures as results.
func biCall(t testing.TB, run *registry.Run, name string, args any) *registry.Result {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	res, err := run.Call(context.Background(), name, json.RawMessage(raw), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", name, raw, err)
	}
	return res
}

// biOK decodes a successful result into v.
func biOK(t testing.TB, res *registry.Result, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %+v", res.Error)
	}
	if err := json.Unmarshal(res.Output, v); err != nil {
		t.Fatalf("%v: %s", err, res.Output)
	}
}

// biFails checks that res is a tool error with code whose message
// contains each of want.
func biFails(t testing.TB, what string, res *registry.Result, code abi.Code, want ...string) {
	t.Helper()
	if !res.IsError || res.Error == nil {
		t.Errorf("%s: succeeded: %s", what, res.Output)
		return
	}
	if res.Error.Code != code {
		t.Errorf("%s: code %s (%s), want %s", what, res.Error.Code, res.Error.Message, code)
	}
	for _, w := range want {
		if !strings.Contains(res.Error.Message, w) {
			t.Errorf("%s: message %q does not contain %q", what, res.Error.Message, w)
		}
	}
}

type biSearch struct {
	Tools []struct {
		Name        string  `json:"name"`
		Score       float64 `json:"score"`
		MatchType   string  `json:"match_type"`
		LoadingMode string  `json:"loading_mode"`
	} `json:"tools"`
	Query      string `json:"query"`
	SearchType string `json:"search_type"`
}

func (s biSearch) names() []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

func biGolden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, filepath.Join(builtinGoldenDir, name), append(b, '\n'), builtinUpdate())
}

// Every built-in is a complete description the registry accepts: schemas
// that compile, examples valid against the input schema, loaded always;
// every one but run_skill_script without side effects and idempotent.
// Each one's behaviour hints follow from what it can do: the readers are
// read-only, idempotent and closed; run_skill_script runs a skill's
// script, which may do anything its grant allows, so it is none of
// these and may destroy.
func TestBuiltinDescriptions(t *testing.T) {
	e := biSetup(t, biOpts{})
	reader := registry.MCPToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	want := []struct {
		name  string
		hints registry.MCPToolAnnotations
	}{
		{registry.ToolSearchName, reader},
		{registry.SkillSearchName, reader},
		{registry.SkillGetName, reader},
		{registry.SkillListName, reader},
		{registry.ListSkillsName, reader},
		{registry.LoadSkillName, reader},
		{registry.ReadSkillResourceName, reader},
		{registry.RunSkillScriptName, registry.MCPToolAnnotations{DestructiveHint: true, OpenWorldHint: true}},
	}
	var descs []*packs.ToolSpec
	for _, w := range want {
		name := w.name
		tl, ok := e.reg.Tool(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		runsScripts := name == registry.RunSkillScriptName
		if tl.Kind != registry.KindBuiltin || tl.Loading != packs.LoadingAlways || tl.SideEffects != runsScripts ||
			tl.Idempotent == runsScripts || tl.Hidden || tl.RunsCode != runsScripts || tl.APIName != name {
			t.Errorf("%s: kind %s loading %s side effects %v idempotent %v hidden %v runs code %v API name %q",
				name, tl.Kind, tl.Loading, tl.SideEffects, tl.Idempotent, tl.Hidden, tl.RunsCode, tl.APIName)
		}
		w.hints.Title = tl.DisplayName
		if got := registry.MCPTools([]*registry.Tool{tl}, registry.RenderOptions{})[0].Annotations; got != w.hints {
			t.Errorf("%s: MCP annotations %+v, want %+v", name, got, w.hints)
		}
		if len(tl.Description) < 40 || len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 {
			t.Errorf("%s: incomplete description: %+v", name, tl.ToolSpec)
		}
		in, err := packs.CompileSchema(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range tl.Examples {
			if vs, err := packs.ValidateJSON(in, ex.Args); err != nil || len(vs) > 0 {
				t.Errorf("%s: example %s: %v %v", name, ex.Args, vs, err)
			}
		}
		descs = append(descs, tl.ToolSpec)
	}
	biGolden(t, "descriptions.golden.json", descs)

	// Each backing brings its own tools; none means none.
	if n := len(registry.Builtins(registry.BuiltinOptions{})); n != 0 {
		t.Errorf("Builtins without an index or skills = %d tools", n)
	}
	// One skill tool family: the load family unless SkillTools names the
	// search family.
	search := registry.SkillToolsSearch
	for _, c := range []struct {
		opts registry.BuiltinOptions
		want string
	}{
		{registry.BuiltinOptions{Skills: e.set}, "list_skills load_skill read_skill_resource run_skill_script"},
		{registry.BuiltinOptions{Index: e.idx, Skills: e.set}, "tool_search list_skills load_skill read_skill_resource run_skill_script"},
		{registry.BuiltinOptions{Index: e.idx, Skills: e.set, SkillTools: registry.SkillToolsLoad}, "tool_search list_skills load_skill read_skill_resource run_skill_script"},
		{registry.BuiltinOptions{Index: e.idx, Skills: e.set, SkillTools: search}, "tool_search skill_search skill_get skill_list"},
		{registry.BuiltinOptions{Index: e.idx, Skills: e.set, SkillTools: "both"}, "tool_search"},
		{registry.BuiltinOptions{Index: e.idx}, "tool_search"},
		{registry.BuiltinOptions{Skills: e.set, SkillTools: search}, ""},
		{registry.BuiltinOptions{Index: e.idx, SkillTools: search}, "tool_search skill_search skill_get skill_list"},
		{registry.BuiltinOptions{Index: e.idx, SkillTools: search, NoToolSearch: true}, "skill_search skill_get skill_list"},
		{registry.BuiltinOptions{Index: e.idx, SkillTools: search, NoSkillDiscovery: true}, "tool_search"},
	} {
		var got []string
		for _, b := range registry.Builtins(c.opts) {
			got = append(got, b.Describe().Name)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("Builtins(%+v) = %v, want %s", c.opts, got, c.want)
		}
	}
	// A built-in called outside a run says so, as a tool error.
	for _, b := range allBuiltins(registry.BuiltinOptions{Index: e.idx, Skills: e.set}) {
		_, err := b.Execute(context.Background(), json.RawMessage(`{}`))
		var te *registry.ToolError
		if !errors.As(err, &te) || te.Code != abi.CodeInternal || !strings.Contains(te.Message, "through a run") {
			t.Errorf("%s outside a run: %v", b.Describe().Name, err)
		}
	}
}

// tool_search returns only tools the run may find: never one its policy
// hides or a hidden tool, not by words, pattern or exact name; and it
// leaves out tools already visible unless asked.
func TestToolSearchOnlyFindableTools(t *testing.T) {
	e := biSetup(t, biOpts{withPack: true})
	open := e.run(t, registry.RunContext{}, nil)
	guarded := e.run(t, registry.RunContext{}, biPolicy)

	search := func(run *registry.Run, args any) biSearch {
		t.Helper()
		var s biSearch
		biOK(t, biCall(t, run, registry.ToolSearchName, args), &s)
		return s
	}
	// The control: without the policy, admin_wipe is found.
	if got := search(open, map[string]any{"query": "admin_wipe", "search_type": "exact"}).names(); !slices.Equal(got, []string{"admin_wipe"}) {
		t.Fatalf("exact admin_wipe in an open run = %v", got)
	}
	if got := search(open, map[string]any{"query": "wipe all data"}).names(); !slices.Contains(got, "admin_wipe") {
		t.Fatalf("fts in an open run = %v", got)
	}
	for _, q := range []map[string]any{
		{"query": "admin_wipe", "search_type": "exact"},
		{"query": "ADMIN_WIPE", "search_type": "exact"},
		{"query": "secret_probe", "search_type": "exact"},
		{"query": "wipe all data erase records"},
		{"query": "admin_wipe"},
		{"query": "probe the secret store"},
		{"query": "wipe", "search_type": "regex", "include_always_loaded": true},
		{"query": ".*", "search_type": "regex", "limit": 20, "include_always_loaded": true},
		{"query": "^(admin|secret|hidden)", "search_type": "regex", "include_always_loaded": true},
		{"query": "hidden_echo", "search_type": "exact", "include_always_loaded": true},
	} {
		for _, run := range []*registry.Run{guarded, open} {
			for _, name := range search(run, q).names() {
				if !run.Findable(name) || name == "secret_probe" || name == "hidden_echo" {
					t.Errorf("%v: returned %s", q, name)
				}
				if run == guarded && name == "admin_wipe" {
					t.Errorf("%v: the policy-hidden admin_wipe was returned", q)
				}
			}
		}
	}

	// Tools already visible are left out unless include_always_loaded.
	all := search(open, map[string]any{"query": ".*", "search_type": "regex", "limit": 20})
	var deferred []string
	for _, tl := range open.Deferred() {
		deferred = append(deferred, tl.Name)
	}
	if got := all.names(); !slices.Equal(biSorted(got), deferred) {
		t.Errorf("regex .* = %v, want the deferred tools %v", got, deferred)
	}
	for _, tl := range all.Tools {
		if tl.LoadingMode != packs.LoadingDeferred || tl.MatchType != "regex" || tl.Score <= 0 || tl.Score > 1 {
			t.Errorf("hit %+v", tl)
		}
	}
	with := search(open, map[string]any{"query": "word_count", "search_type": "exact", "include_always_loaded": true}).names()
	without := search(open, map[string]any{"query": "word_count", "search_type": "exact"}).names()
	if !slices.Equal(with, []string{"word_count"}) || len(without) != 0 {
		t.Errorf("always-loaded word_count: with %v, without %v", with, without)
	}
	// A deferred tool activated in the run is visible now, and left out.
	if res := biCall(t, open, "web_fetch", `{}`); res.IsError {
		t.Fatal(res.Error)
	}
	if got := search(open, map[string]any{"query": "web_fetch", "search_type": "exact"}).names(); len(got) != 0 {
		t.Errorf("an activated tool is still returned: %v", got)
	}
	if got := search(open, map[string]any{"query": "web_fetch", "search_type": "exact", "include_always_loaded": true}).names(); !slices.Equal(got, []string{"web_fetch"}) {
		t.Errorf("an activated tool with include_always_loaded: %v", got)
	}
}

func biSorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A user's query never reaches FTS5 as syntax: operators, column filters,
// quotes and parentheses are words, never an error or a match-all.
func TestToolSearchQueryIsNeverFTSSyntax(t *testing.T) {
	e := biSetup(t, biOpts{})
	run := e.run(t, registry.RunContext{}, nil)
	web := []string{"web_fetch", "web_search"}
	for q, allowed := range map[string][]string{
		`"`: nil, `)(`: nil, `* OR *`: nil, `NEAR(x y)`: nil, `^`: nil, `-`: nil, `{}`: nil, `AND OR NOT`: nil,
		`"" OR ""`: nil,
		// "drop" is a word like any other: a synonym of wipe.
		`'; DROP TABLE tools; --`: {"admin_wipe"}, `*`: nil, `x" OR "*`: nil,
		`web" OR "*`: web, `web OR count`: web, `web AND NOT fetch`: web, `^web`: web, `-web`: web, `web*`: web,
		`{name}: web`: web, `name:web`: web, `description:web`: web, `NEAR(web page)`: web,
	} {
		var s biSearch
		res := biCall(t, run, registry.ToolSearchName, map[string]any{"query": q})
		if res.IsError {
			t.Errorf("%q: %+v", q, res.Error)
			continue
		}
		biOK(t, res, &s)
		if s.Query != q || s.SearchType != index.SearchFTS {
			t.Errorf("%q: answer echoes %q, %q", q, s.Query, s.SearchType)
		}
		for _, name := range s.names() {
			if !slices.Contains(allowed, name) {
				t.Errorf("%q: returned %s (allowed %v)", q, name, allowed)
			}
		}
	}
}

// Bad requests are invalid_input tool errors; the schema catches what it
// can before the index sees the request.
func TestToolSearchErrors(t *testing.T) {
	e := biSetup(t, biOpts{})
	run := e.run(t, registry.RunContext{}, nil)
	for args, want := range map[string]string{
		`{"query":"   "}`:                     "query is empty",
		`{"query":"(","search_type":"regex"}`: "regex pattern is not valid",
		`{"query":"x","search_type":"bm25"}`:  "$.search_type",
		`{"query":"x","limit":0}`:             "$.limit",
		`{"query":"x","limit":21}`:            "$.limit",
		`{"query":"x","extra":1}`:             `unknown field "extra"`,
		`{}`:                                  `missing required field "query"`,
		`{"query":"` + strings.Repeat("a", 201) + `","search_type":"regex"}`: "too long",
	} {
		biFails(t, args, biCall(t, run, registry.ToolSearchName, args), abi.CodeInvalidInput, want)
	}
}

// MaxSearchResults lowers the limit of every search, the default one
// included.
func TestToolSearchMaxResults(t *testing.T) {
	e := biSetup(t, biOpts{builtins: func(o *registry.BuiltinOptions) { o.MaxSearchResults = 1 }})
	run := e.run(t, registry.RunContext{}, nil)
	for _, args := range []string{`{"query":"web"}`, `{"query":"web","limit":20}`} {
		var s biSearch
		biOK(t, biCall(t, run, registry.ToolSearchName, args), &s)
		if len(s.Tools) != 1 {
			t.Errorf("%s: %v", args, s.names())
		}
	}
}

// Without FTS5 an fts search runs as regex, and the answer says so.
func TestToolSearchReportsTheEffectiveType(t *testing.T) {
	e := biSetup(t, biOpts{disableFTS: true})
	var s biSearch
	biOK(t, biCall(t, e.run(t, registry.RunContext{}, nil), registry.ToolSearchName, `{"query":"search the web"}`), &s)
	if s.SearchType != index.SearchRegex || !slices.Contains(s.names(), "web_search") {
		t.Errorf("fallback answer: %+v", s)
	}
	for _, tl := range s.Tools {
		if tl.MatchType != index.SearchRegex {
			t.Errorf("hit %+v", tl)
		}
	}
}

// skill_search, skill_get and skill_list answer within the run's scope,
// with references to tools the run may not find rewritten, in the index
// texts as in the skill tools' own.
func TestSkillTextsNameNoHiddenTool(t *testing.T) {
	e := biSetup(t, biOpts{})
	open := e.run(t, registry.RunContext{}, nil)
	guarded := e.run(t, registry.RunContext{}, biPolicy)

	texts := func(run *registry.Run) map[string]string {
		out := map[string]string{}
		for name, args := range map[string]string{
			"skill_get":          `{"names":["pdf-tools","restart-service"],"format":"raw"}`,
			"skill_search":       `{"query":"restart a stuck service"}`,
			"skill_list":         `{}`,
			"list_skills":        `{}`,
			"load_skill pdf":     `{"skill_name":"pdf-tools"}`,
			"load_skill restart": `{"skill_name":"restart-service"}`,
			"load_skill csv":     `{"skill_name":"csv-helper"}`,
		} {
			tool, _, _ := strings.Cut(name, " ")
			res := biCall(t, run, tool, args)
			if res.IsError {
				t.Fatalf("%s: %+v", name, res.Error)
			}
			out[name] = string(res.Output)
		}
		return out
	}
	for name, text := range texts(open) {
		if strings.Contains(text, "secret_probe") {
			t.Errorf("%s names the hidden secret_probe: %s", name, text)
		}
	}
	// The control: the open run sees admin_wipe named where the skills
	// name it.
	for _, name := range []string{"skill_get", "skill_search", "load_skill pdf", "load_skill restart", "load_skill csv", "list_skills"} {
		if !strings.Contains(texts(open)[name], "admin_wipe") {
			t.Errorf("%s: the open run does not see admin_wipe: %s", name, texts(open)[name])
		}
	}
	for name, text := range texts(guarded) {
		if strings.Contains(text, "admin_wipe") || strings.Contains(text, "secret_probe") {
			t.Errorf("%s names a tool the run may not find: %s", name, text)
		}
		if strings.Contains(name, "load_skill") && !strings.Contains(text, "find one with tool_search") {
			t.Errorf("%s: no guidance in place of the tool: %s", name, text)
		}
	}
	// Tools the run may find stay named.
	if g := texts(guarded)["load_skill pdf"]; !strings.Contains(g, "word_count") {
		t.Errorf("load_skill rewrote a findable tool: %s", g)
	}
	// Personal data is redacted from skill texts.
	if l := texts(open)["list_skills"]; strings.Contains(l, "owner@example.com") || !strings.Contains(l, "[REDACTED_EMAIL]") {
		t.Errorf("list_skills: %s", l)
	}
}

// A run sees the skills of its scope only: a tenant's skill is missing
// for every other tenant, exactly like a name that does not exist.
func TestSkillToolsAreScopedToTheRun(t *testing.T) {
	e := biSetup(t, biOpts{})
	var got struct {
		Skills  []struct{ Name string } `json:"skills"`
		Missing []string                `json:"missing"`
	}
	biOK(t, biCall(t, e.run(t, registry.RunContext{Tenant: "a"}, nil), registry.SkillGetName, `{"names":["tenant-only","pdf-tools"]}`), &got)
	if len(got.Skills) != 2 || len(got.Missing) != 0 {
		t.Errorf("tenant a: %+v", got)
	}
	got.Skills, got.Missing = nil, nil
	biOK(t, biCall(t, e.run(t, registry.RunContext{Tenant: "b"}, nil), registry.SkillGetName, `{"names":["tenant-only","no-such-skill"]}`), &got)
	if len(got.Skills) != 0 || !slices.Equal(got.Missing, []string{"tenant-only", "no-such-skill"}) {
		t.Errorf("tenant b: %+v", got)
	}
	for _, rc := range []registry.RunContext{{Tenant: "b"}, {}} {
		run := e.run(t, rc, nil)
		for _, tool := range []string{registry.SkillListName, registry.SkillSearchName} {
			args := `{}`
			if tool == registry.SkillSearchName {
				args = `{"query":"close the books at month end"}`
			}
			if out := biCall(t, run, tool, args); out.IsError || strings.Contains(string(out.Output), "tenant-only") {
				t.Errorf("%+v %s: %s %+v", rc, tool, out.Output, out.Error)
			}
		}
	}
	if out := biCall(t, e.run(t, registry.RunContext{Tenant: "a"}, nil), registry.SkillListName, `{"scope":"tenant"}`); !strings.Contains(string(out.Output), "tenant-only") {
		t.Errorf("tenant a's list: %s", out.Output)
	}
	biFails(t, "skill_get of 11 names", biCall(t, e.run(t, registry.RunContext{}, nil), registry.SkillGetName,
		`{"names":["a","b","c","d","e","f","g","h","i","j","k"]}`), abi.CodeInvalidInput, "$.names")
}

// list_skills and load_skill answer with every skill the run may use,
// file and programmatic alike.
func TestListAndLoadSkills(t *testing.T) {
	e := biSetup(t, biOpts{})
	run := e.run(t, registry.RunContext{}, nil)
	out := map[string]json.RawMessage{}
	var list struct {
		Skills []struct{ Name string } `json:"skills"`
	}
	res := biCall(t, run, registry.ListSkillsName, `{}`)
	biOK(t, res, &list)
	out["list_skills"] = res.Output
	var names []string
	for _, s := range list.Skills {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"csv-helper", "pdf-tools", "restart-service"}) {
		t.Errorf("list_skills names = %v", names)
	}
	for _, name := range names {
		res := biCall(t, run, registry.LoadSkillName, map[string]string{"skill_name": name})
		if res.IsError {
			t.Fatalf("load_skill %s: %+v", name, res.Error)
		}
		out["load_skill "+name] = res.Output
	}
	biGolden(t, "skills.golden.json", out)
	biFails(t, "load_skill of a missing skill", biCall(t, run, registry.LoadSkillName, `{"skill_name":"nope"}`),
		abi.CodeNotFound, "skill not found", `"nope"`)
}

// A skill the set's Visible refuses does not exist for the run: not
// listed, and "skill not found" from every skill tool.
func TestSkillVisibility(t *testing.T) {
	e := biSetup(t, biOpts{set: registry.SkillSetOptions{Visible: func(rc registry.RunContext, skill string) bool {
		return rc.Tenant == "a" || skill != "pdf-tools"
	}}})
	b := e.run(t, registry.RunContext{Tenant: "b"}, nil)
	if out := biCall(t, b, registry.ListSkillsName, `{}`); strings.Contains(string(out.Output), "pdf-tools") {
		t.Errorf("list_skills of tenant b: %s", out.Output)
	}
	for tool, args := range map[string]string{
		registry.LoadSkillName:         `{"skill_name":"%s"}`,
		registry.ReadSkillResourceName: `{"skill_name":"%s","resource_name":"references/guide.md"}`,
		registry.RunSkillScriptName:    `{"skill_name":"%s","script_name":"scripts/merge.py"}`,
	} {
		hidden := biCall(t, b, tool, fmt.Sprintf(args, "pdf-tools"))
		none := biCall(t, b, tool, fmt.Sprintf(args, "zzz-tools"))
		biFails(t, tool, hidden, abi.CodeNotFound, "skill not found")
		if hidden.Error != nil && none.Error != nil && strings.ReplaceAll(hidden.Error.Message, "pdf-tools", "N") != strings.ReplaceAll(none.Error.Message, "zzz-tools", "N") {
			t.Errorf("%s: a hidden skill gets %q, a missing one %q", tool, hidden.Error.Message, none.Error.Message)
		}
	}
	if out := biCall(t, e.run(t, registry.RunContext{Tenant: "a"}, nil), registry.LoadSkillName, `{"skill_name":"pdf-tools"}`); out.IsError {
		t.Errorf("tenant a: %+v", out.Error)
	}
}

type biResource struct {
	SkillName    string `json:"skill_name"`
	ResourceName string `json:"resource_name"`
	Size         int    `json:"size"`
	SHA256       string `json:"sha256"`
	Encoding     string `json:"encoding"`
	Content      string `json:"content"`
}

// read_skill_resource serves only the files listed for the skill, read
// inside its folder: traversal strings, absolute paths and links swapped
// in after loading are refused.
func TestReadSkillResource(t *testing.T) {
	e := biSetup(t, biOpts{set: registry.SkillSetOptions{MaxResourceBytes: 1024}})
	run := e.run(t, registry.RunContext{}, nil)
	read := func(skill, name string) *registry.Result {
		return biCall(t, run, registry.ReadSkillResourceName, map[string]string{"skill_name": skill, "resource_name": name})
	}
	var r biResource
	biOK(t, read("pdf-tools", "references/guide.md"), &r)
	if r.Content != "# Guide\n\nStep one: open the form.\n" || r.Encoding != "utf-8" || r.Size != len(r.Content) || len(r.SHA256) != 64 {
		t.Errorf("guide.md: %+v", r)
	}
	biOK(t, read("pdf-tools", "./references//guide.md"), &r)
	if r.ResourceName != "references/guide.md" {
		t.Errorf("a cleaned path: %+v", r)
	}
	biOK(t, read("pdf-tools", "assets/logo.bin"), &r)
	if r.Encoding != "base64" || r.Content != "iVBORwABAv8=" || r.Size != 8 {
		t.Errorf("logo.bin: %+v", r)
	}
	biOK(t, read("pdf-tools", "scripts/merge.py"), &r)
	if r.Content != "print('merged')\n" {
		t.Errorf("a script's source: %+v", r)
	}
	biOK(t, read("csv-helper", "schema.md"), &r)
	if r.Content != "| col | type |\n" {
		t.Errorf("schema.md: %+v", r)
	}
	biOK(t, read("csv-helper", "live/rows.json"), &r)
	if r.Content != `{"rows":3}` {
		t.Errorf("rows.json: %+v", r)
	}
	biFails(t, "broken.txt", read("csv-helper", "broken.txt"), abi.CodeUnavailable, "resource unreadable", "disk on fire")

	for _, name := range []string{
		"../secret.txt", "../../secret.txt", "references/../../secret.txt", "references/../../../src/secret.txt",
		"/etc/passwd", "/skills/secret.txt", `..\secret.txt`, `references\guide.md`, "C:/secret.txt", "c:secret.txt",
		"..", "../", "references/..", ".", "./", "references/\x00guide.md", "\x7f", "references/guide.md\n",
	} {
		res := read("pdf-tools", name)
		biFails(t, fmt.Sprintf("%q", name), res, abi.CodeInvalidInput, "invalid resource path")
		if strings.Contains(string(res.Output), biSecret) || (res.Error != nil && strings.Contains(res.Error.Message, biSecret)) {
			t.Errorf("%q: the secret leaked", name)
		}
	}
	for _, name := range []string{"SKILL.md", "secret.txt", "references", "references/missing.md", "references/guide.MD", "schema.md"} {
		biFails(t, name, read("pdf-tools", name), abi.CodeNotFound, "resource not found")
	}
	biFails(t, "missing skill", read("nope", "references/guide.md"), abi.CodeNotFound, "skill not found")
	biFails(t, "empty name", read("pdf-tools", ""), abi.CodeInvalidInput, "$.resource_name")
	biFails(t, "big.txt", read("pdf-tools", "references/big.txt"), abi.CodeLimitExceeded, "resource too large", "4096 bytes", "at most 1024")

	// A file changed since loading is refused; so is one swapped for a
	// link leaving the folder, even to a file of the same size and hash.
	skillDir := filepath.Join(e.dir, "skills", "pdf-tools")
	if err := os.WriteFile(filepath.Join(skillDir, "references", "nested", "a.md"), []byte("NESTED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	biFails(t, "changed file", read("pdf-tools", "references/nested/a.md"), abi.CodeUnavailable, "resource unreadable", "changed since")
	outside := filepath.Join(t.TempDir(), "guide.md")
	if err := os.WriteFile(outside, []byte("# Guide\n\nStep one: open the form.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	guide := filepath.Join(skillDir, "references", "guide.md")
	if err := os.Remove(guide); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, guide); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	res := read("pdf-tools", "references/guide.md")
	biFails(t, "a link leaving the folder", res, abi.CodeUnavailable, "resource unreadable")
	if res.Error != nil && strings.Contains(res.Error.Message, t.TempDir()) {
		t.Errorf("the message names a host path: %s", res.Error.Message)
	}
	if err := os.Remove(guide); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "secret.txt"), guide); err != nil {
		t.Fatal(err)
	}
	if res := read("pdf-tools", "references/guide.md"); !res.IsError || strings.Contains(string(res.Output), biSecret) {
		t.Errorf("a relative link leaving the folder: %s %+v", res.Output, res.Error)
	}
	if err := os.Remove(filepath.Join(skillDir, "assets", "logo.bin")); err != nil {
		t.Fatal(err)
	}
	biFails(t, "a removed file", read("pdf-tools", "assets/logo.bin"), abi.CodeUnavailable, "gone")
}

// run_skill_script runs a programmatic skill's Go script with its
// arguments, checked against its schema; every failure is a tool error
// with its documented code; file scripts cannot run yet.
func TestRunSkillScript(t *testing.T) {
	e := biSetup(t, biOpts{})
	run := e.run(t, registry.RunContext{}, nil)
	script := func(skill, name string, args any) *registry.Result {
		in := map[string]any{"skill_name": skill, "script_name": name}
		if args != nil {
			in["args"] = args
		}
		return biCall(t, run, registry.RunSkillScriptName, in)
	}
	var out struct {
		SkillName  string          `json:"skill_name"`
		ScriptName string          `json:"script_name"`
		Output     json.RawMessage `json:"output"`
	}
	biOK(t, script("csv-helper", "stats", map[string]any{"csv": "a,b,c\n1,2,3\n4,5,6", "header": true}), &out)
	if out.SkillName != "csv-helper" || out.ScriptName != "stats" || string(out.Output) != `{"columns":3,"rows":2}` {
		t.Errorf("stats: %+v %s", out, out.Output)
	}
	biOK(t, script("csv-helper", "echo", map[string]any{"text": "hi"}), &out)
	if string(out.Output) != `"text: hi"` {
		t.Errorf("echo: %s", out.Output)
	}
	biOK(t, script("csv-helper", "echo", nil), &out)
	if string(out.Output) != `"text: \u003cnil\u003e"` && string(out.Output) != `"text: <nil>"` {
		t.Errorf("echo without args: %s", out.Output)
	}
	// The script runs in the run: its tool calls go through it.
	biOK(t, script("csv-helper", "search", map[string]any{"q": "go wasm"}), &out)
	if string(out.Output) != `{"q":"go wasm"}` || !run.Visible("web_search") {
		t.Errorf("search: %s (web_search visible %v)", out.Output, run.Visible("web_search"))
	}

	biFails(t, "stats without csv", script("csv-helper", "stats", map[string]any{"header": 1}), abi.CodeInvalidInput,
		`do not match its input schema`, `$: missing required field "csv"`, `$.header: must be a boolean`)
	biFails(t, "args not an object", biCall(t, run, registry.RunSkillScriptName, `{"skill_name":"csv-helper","script_name":"echo","args":[1]}`),
		abi.CodeInvalidInput, "$.args")
	biFails(t, "fail", script("csv-helper", "fail", nil), abi.CodeGuestError, "script failed", `"fail"`, "boom")
	biFails(t, "denied", script("csv-helper", "denied", nil), abi.CodePermissionDenied, "no access to the exports")
	biFails(t, "unencodable", script("csv-helper", "unencodable", nil), abi.CodeInternal, "script failed", "JSON")
	biFails(t, "missing script", script("csv-helper", "nope", nil), abi.CodeNotFound, "script not found", "stats")
	biFails(t, "missing skill", script("nope", "stats", nil), abi.CodeNotFound, "skill not found")

	// File scripts: not found, or cannot run without a host (see
	// script_test.go for .wasm scripts that run).
	biFails(t, "fill.wasm", script("pdf-tools", "scripts/fill.wasm", nil), abi.CodeUnavailable, "script cannot run", "WebAssembly", "no host")
	biFails(t, "fill.wasm by its name", script("pdf-tools", "fill.wasm", nil), abi.CodeUnavailable, "script cannot run", "no host")
	biFails(t, "merge.py", script("pdf-tools", "merge.py", nil), abi.CodeUnavailable, "script cannot run", "no native scripts")
	biFails(t, "a file that is not a script", script("pdf-tools", "references/guide.md", nil), abi.CodeNotFound, "script not found", "scripts/fill.wasm")
	biFails(t, "a playbook has no scripts", script("restart-service", "x", nil), abi.CodeNotFound, "script not found", "it has none")
}

// A programmatic skill is held to the rules of a SKILL.md skill; each
// problem names the skill and the field.
func TestNewSkillSetRefusesInvalidSkills(t *testing.T) {
	run := func(context.Context, map[string]any) (any, error) { return nil, nil }
	ok := registry.Skill{Name: "good", Description: "Does good things."}
	cases := []registry.Skill{
		{Name: "Bad_Name", Description: "x"},
		{Name: "", Description: "x"},
		{Name: "no-description"},
		{Name: "blank-description", Description: "   "},
		{Name: "long-description", Description: strings.Repeat("d", 1025)},
		{Name: strings.Repeat("n", 65), Description: "x"},
		{Name: "long-compat", Description: "x", Compatibility: strings.Repeat("c", 501)},
		{Name: "bad-resources", Description: "x", Resources: []registry.SkillResource{
			{Name: "../up.md", Content: []byte("x")}, {Name: "/abs.md"}, {Name: "a.md"}, {Name: "a.md"},
			{Name: "both.md", Content: []byte("x"), Load: func(context.Context) ([]byte, error) { return nil, nil }}, {Name: "./dot.md"},
		}},
		{Name: "bad-scripts", Description: "x", Scripts: []registry.SkillScript{
			{Name: "no run"}, {Name: "s", Run: run}, {Name: "s", Run: run}, {Name: "nil-run"},
			{Name: "schema", Run: run, InputSchema: json.RawMessage(`{"type":"nope"}`)},
		}},
		{Name: "huge", Description: "", Instructions: strings.Repeat("i", packs.MaxSkillMDBytes)},
		{Name: "not-utf8", Description: "x", Instructions: "caf\xe9"},
	}
	var b strings.Builder
	for _, c := range cases {
		_, err := registry.NewSkillSet(registry.SkillSetOptions{}, ok, c)
		if !errors.Is(err, registry.ErrInvalidSkill) {
			t.Errorf("%q: %v", c.Name, err)
			continue
		}
		if strings.Contains(err.Error(), `"good"`) {
			t.Errorf("the valid skill is blamed: %v", err)
		}
		fmt.Fprintf(&b, "%.40q:\n%v\n\n", c.Name, err)
	}
	_, err := registry.NewSkillSet(registry.SkillSetOptions{}, ok, ok)
	fmt.Fprintf(&b, "twice:\n%v\n", err)
	testenv.Golden(t, filepath.Join(builtinGoldenDir, "skill-errors.golden.txt"), []byte(b.String()), builtinUpdate())

	full := biCSVSkill()
	if _, err := registry.NewSkillSet(registry.SkillSetOptions{}, full, ok); err != nil {
		t.Errorf("valid skills: %v", err)
	}
}

// The skills listing for a system prompt goes through the instruction
// template, which must hold {skills_list}.
func TestSkillsInstructions(t *testing.T) {
	e := biSetup(t, biOpts{})
	run := e.run(t, registry.RunContext{}, biPolicy)
	got, err := e.set.Instructions(run, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<skills>", "load_skill", "- csv-helper: Summarise CSV files;", "- pdf-tools: Fill and merge PDF forms",
		"- restart-service: A service stopped answering"} {
		if !strings.Contains(got, want) {
			t.Errorf("default template: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "admin_wipe") || strings.Contains(got, "owner@example.com") {
		t.Errorf("the listing leaks a hidden tool or an address:\n%s", got)
	}
	got, err = e.set.Instructions(run, "Skills:\n{skills_list}\nUse load_skill.")
	if err != nil || !strings.HasPrefix(got, "Skills:\n- csv-helper: ") || !strings.HasSuffix(got, "\nUse load_skill.") {
		t.Errorf("custom template: %q, %v", got, err)
	}
	if _, err := e.set.Instructions(run, "Skills: {skills}"); !errors.Is(err, registry.ErrTemplateNoSkillsList) {
		t.Errorf("a template without {skills_list}: %v", err)
	}
	var list struct {
		Skills []registry.SkillSummary `json:"skills"`
	}
	biOK(t, biCall(t, run, registry.ListSkillsName, `{}`), &list)
	if sum := e.set.Summaries(run); len(sum) != len(list.Skills) || sum[1] != list.Skills[1] {
		t.Errorf("Summaries %+v differ from list_skills %+v", sum, list.Skills)
	}
}

// Any resource name either reads a file listed for the skill, with that
// file's bytes, or is refused as invalid or not found; no name reaches a
// file outside the skill folder.
func FuzzReadSkillResource(f *testing.F) {
	e := biSetup(f, biOpts{})
	run := e.run(f, registry.RunContext{}, nil)
	listed := map[string][]byte{}
	se, _ := e.cat.Skill("pdf-tools")
	for _, r := range se.Skill.Resources {
		data, err := os.ReadFile(filepath.Join(e.dir, "skills", "pdf-tools", filepath.FromSlash(r.Path)))
		if err != nil {
			f.Fatal(err)
		}
		listed[r.Path] = data
	}
	for _, s := range []string{"references/guide.md", "./assets/logo.bin", "../secret.txt", "references/../../secret.txt",
		"/etc/passwd", `..\secret.txt`, "C:secret.txt", "references//nested/./a.md", "SKILL.md", "\x00", "ref\u00e9rences", "a/../references/guide.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		args, _ := json.Marshal(map[string]string{"skill_name": "pdf-tools", "resource_name": name})
		res, err := run.Call(context.Background(), registry.ReadSkillResourceName, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			if c := res.Error.Code; c != abi.CodeInvalidInput && c != abi.CodeNotFound && c != abi.CodeLimitExceeded {
				t.Fatalf("%q: %+v", name, res.Error)
			}
			if strings.Contains(res.Error.Message, biSecret) {
				t.Fatalf("%q: the secret leaked", name)
			}
			return
		}
		var r biResource
		if err := json.Unmarshal(res.Output, &r); err != nil {
			t.Fatal(err)
		}
		want, ok := listed[r.ResourceName]
		if !ok || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
			t.Fatalf("%q read %q, which is not a listed file", name, r.ResourceName)
		}
		got := []byte(r.Content)
		if r.Encoding == "base64" {
			if got, err = base64.StdEncoding.DecodeString(r.Content); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: content differs from %s", name, r.ResourceName)
		}
	})
}

// The bundled skills are read from the binary's embedded files.
func TestReadBundledSkillResource(t *testing.T) {
	ctx := context.Background()
	cat, err := packs.LoadCatalog(ctx, []packs.SourceSpec{packs.BundledSource()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := registry.NewSkillSet(registry.SkillSetOptions{Files: cat.Skills})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(ctx, nil, registry.Options{Builtins: registry.Builtins(registry.BuiltinOptions{Skills: set})})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reg.NewRun(registry.RunContext{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "packs", "bundled", "skills", "log-triage", "references", "patterns.md"))
	if err != nil {
		t.Fatal(err)
	}
	var r biResource
	biOK(t, biCall(t, run, registry.ReadSkillResourceName, `{"skill_name":"log-triage","resource_name":"references/patterns.md"}`), &r)
	if r.Content != string(want) {
		t.Errorf("patterns.md: %q", r.Content)
	}
	biFails(t, "escape", biCall(t, run, registry.ReadSkillResourceName, `{"skill_name":"log-triage","resource_name":"../web-research/SKILL.md"}`),
		abi.CodeInvalidInput, "invalid resource path")
}
