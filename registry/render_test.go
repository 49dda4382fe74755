package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// The golden files of the renderings are rewritten with -update. The flag
// is defined here only when no other test file of the package defines it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func renderUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const renderGoldenDir = "../testdata/registry/render"

// renderFixture returns a fixed catalog: visible tools, deferred tools,
// and the hidden tool put in both lists, which must never show.
func renderFixture() (visible, deferred []*registry.Tool, hidden *registry.Tool) {
	mk := func(d packs.Tool) *registry.Tool {
		return &registry.Tool{Tool: &d, Kind: registry.KindWasm, Pack: "fixture"}
	}
	wordCount := mk(packs.Tool{
		Name: "word_count", DisplayName: "Word count", Loading: packs.LoadingAlways,
		Description: "Count the words of a text.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {"text": {"type": "string", "description": "The text <to count>"}},
			"required": ["text"]
		}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"words":{"type":"integer"}}}`),
		Idempotent:   true,
		Examples: []packs.Example{
			{Args: json.RawMessage(`{"text": ""}`), Description: "An empty text has no words", Tags: []string{"edge_case"}},
			{Args: json.RawMessage(`{"text": "a\tb"}`), Description: "Tabs separate words\ntoo"},
			{Args: json.RawMessage(`{"text": "one two three"}`), Description: "A typical sentence", Tags: []string{"common"}},
			{Args: json.RawMessage(`{"text": "one"}`), Tags: []string{"Minimal", "smoke"}},
			{Args: json.RawMessage(`{"text": "x y"}`), Description: "Another typical one", Tags: []string{"common"}},
		},
	})
	fileDelete := mk(packs.Tool{
		Name: "file_delete", DisplayName: "File delete", Loading: packs.LoadingAlways,
		Description:        "Delete a file under /data.",
		InputSchema:        json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		SideEffects:        true,
		Idempotent:         true,
		RequiresFilesystem: true, // AUTO risk: DANGEROUS
		Examples: []packs.Example{
			{Args: json.RawMessage(`{"path":"/data/old.txt"}`), Description: "Remove one file", Tags: []string{"minimal"}},
		},
	})
	sendNote := mk(packs.Tool{
		Name: "send_note", DisplayName: "Send note", Loading: packs.LoadingDeferred, // activated in this run
		Description: "Leave a note for the operator.",
		// No "type": the renderings add it.
		InputSchema: json.RawMessage(`{"properties":{"note":{"type":"string"}},"required":["note"]}`),
		SideEffects: true, // AUTO risk: MODERATE
	})
	clockNow := mk(packs.Tool{
		Name: "clock_now", DisplayName: "Clock now", Loading: packs.LoadingAlways,
		Description: "Return the current time in RFC 3339.",
		// No input schema, an output schema that is not an object.
		OutputSchema: json.RawMessage(`{"type":"string","format":"date-time"}`),
	})
	httpGet := mk(packs.Tool{
		Name: "http_get", DisplayName: "HTTP get", Loading: packs.LoadingDeferred,
		Description:     "Fetch a URL of an allowed host and return its body.",
		InputSchema:     json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}`),
		Idempotent:      true,
		RequiresNetwork: true,
		RiskLevel:       "MODERATE",
		Examples: []packs.Example{
			{Args: json.RawMessage(`{"url":"https://example.com/"}`), Description: "A page"},
		},
	})
	hidden = mk(packs.Tool{
		Name: "admin_reset", DisplayName: "Admin reset", Loading: packs.LoadingAlways, Hidden: true,
		Description: "Reset everything.", SideEffects: true, RiskLevel: "CRITICAL",
		Examples: []packs.Example{{Args: json.RawMessage(`{}`), Description: "Reset"}},
	})
	// Unsorted on purpose, and send_note given in both lists.
	return []*registry.Tool{wordCount, sendNote, hidden, fileDelete, clockNow},
		[]*registry.Tool{httpGet, hidden, sendNote}, hidden
}

// renderJSON encodes v as the golden files hold it: indented, without
// HTML escaping, ending in a newline.
func renderJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	visible, deferred, _ := renderFixture()
	withExamples := registry.RenderOptions{Examples: true}
	anthropic, err := registry.AnthropicTools(visible, deferred, "", withExamples)
	if err != nil {
		t.Fatal(err)
	}
	var examples strings.Builder
	for _, tool := range registry.MCPTools(append(append([]*registry.Tool{}, visible...), deferred...), registry.RenderOptions{}) {
		for _, rt := range append(visible, deferred...) {
			if rt.Name == tool.Name {
				examples.WriteString("## " + tool.Name + ", n=2\n" + registry.ExamplesBlock(rt, 2) + "\n\n")
				break
			}
		}
	}
	skills, err := registry.SkillsBlock("", []registry.SkillSummary{
		{Name: "log-triage", Description: "Sort a service's logs by severity\nand summarise the errors."},
		{Name: "release-notes", Description: "Draft release notes from merged changes."},
		{Name: "bare"},
	})
	if err != nil {
		t.Fatal(err)
	}
	prompt := registry.JoinBlocks(registry.ToolDiscoveryBlock(deferred), registry.SkillDiscoveryBlock(), skills) + "\n"

	for name, got := range map[string][]byte{
		"openai_chat.json":      renderJSON(t, registry.OpenAITools(visible, withExamples)),
		"openai_responses.json": renderJSON(t, registry.OpenAIResponsesTools(visible, deferred, withExamples)),
		"anthropic.json":        renderJSON(t, anthropic),
		"mcp_tools.json":        renderJSON(t, registry.MCPTools(visible, withExamples)),
		"tool_references.json":  renderJSON(t, registry.ToolReferences(deferred)),
		"examples.txt":          []byte(examples.String()),
		"prompt.txt":            []byte(prompt),
	} {
		t.Run(name, func(t *testing.T) {
			testenv.Golden(t, filepath.Join(renderGoldenDir, name), got, renderUpdate())
		})
	}
}

// Every rendering of the fixture, as JSON or text.
func renderAll(t *testing.T, visible, deferred []*registry.Tool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, opts := range []registry.RenderOptions{{}, {Examples: true, MaxExamples: 10}} {
		out["openai"] += string(renderJSON(t, registry.OpenAITools(visible, opts)))
		out["responses"] += string(renderJSON(t, registry.OpenAIResponsesTools(visible, deferred, opts)))
		for _, s := range []registry.AnthropicSearch{registry.AnthropicSearchRegex, registry.AnthropicSearchBM25, registry.AnthropicSearchClient} {
			a, err := registry.AnthropicTools(visible, deferred, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			out["anthropic"] += string(renderJSON(t, a))
		}
		out["mcp"] += string(renderJSON(t, registry.MCPTools(append(visible, deferred...), opts)))
	}
	out["references"] = string(renderJSON(t, registry.ToolReferences(append(visible, deferred...))))
	for _, tool := range append(visible, deferred...) {
		out["examples"] += registry.ExamplesBlock(tool, 10)
	}
	out["discovery"] = registry.ToolDiscoveryBlock(deferred)
	return out
}

func TestRenderHiddenNeverShown(t *testing.T) {
	visible, deferred, hidden := renderFixture()
	for name, got := range renderAll(t, visible, deferred) {
		for _, leak := range []string{hidden.Name, hidden.Description, "Reset"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s shows the hidden tool (%q):\n%s", name, leak, got)
			}
		}
	}
	if got := registry.ExamplesBlock(hidden, 3); got != "" {
		t.Errorf("ExamplesBlock(hidden) = %q, want empty", got)
	}
	// Only hidden tools deferred: nothing to discover, no search tool.
	if got := registry.ToolDiscoveryBlock([]*registry.Tool{hidden}); got != "" {
		t.Errorf("ToolDiscoveryBlock(hidden only) = %q, want empty", got)
	}
	for _, tool := range registry.OpenAIResponsesTools(visible, []*registry.Tool{hidden}, registry.RenderOptions{}) {
		if tool.Type == "tool_search" || tool.DeferLoading {
			t.Errorf("responses rendering with only hidden deferred tools has %+v", tool)
		}
	}
	a, _ := registry.AnthropicTools(visible, []*registry.Tool{hidden}, "", registry.RenderOptions{})
	for _, tool := range a {
		if tool.Type != "" || tool.DeferLoading {
			t.Errorf("anthropic rendering with only hidden deferred tools has %+v", tool)
		}
	}
}

func TestRenderDeterministic(t *testing.T) {
	visible, deferred, _ := renderFixture()
	want := renderAll(t, visible, deferred)
	// The same tools in another order render the same.
	rev := func(in []*registry.Tool) []*registry.Tool {
		out := make([]*registry.Tool, len(in))
		for i, tool := range in {
			out[len(in)-1-i] = tool
		}
		return out
	}
	got := renderAll(t, rev(visible), rev(deferred))
	for name := range want {
		if name == "references" || name == "examples" {
			continue // these keep the order they are given
		}
		if got[name] != want[name] {
			t.Errorf("%s depends on input order:\n%s\nvs\n%s", name, want[name], got[name])
		}
	}
}

func TestRenderSchemas(t *testing.T) {
	visible, _, _ := renderFixture()
	byName := map[string]registry.OpenAIFunction{}
	for _, tool := range registry.OpenAITools(visible, registry.RenderOptions{}) {
		if tool.Type != "function" {
			t.Errorf("%s: type %q", tool.Function.Name, tool.Type)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, tool.Function.Parameters); err != nil || !bytes.Equal(c.Bytes(), tool.Function.Parameters) {
			t.Errorf("%s: parameters not compact JSON: %s", tool.Function.Name, tool.Function.Parameters)
		}
		byName[tool.Function.Name] = tool.Function
	}
	for name, want := range map[string]string{
		"clock_now":  `{"type":"object","properties":{}}`,
		"send_note":  `{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`,
		"word_count": `{"type":"object","properties":{"text":{"type":"string","description":"The text <to count>"}},"required":["text"]}`,
	} {
		if got := string(byName[name].Parameters); got != want {
			t.Errorf("%s parameters = %s, want %s", name, got, want)
		}
	}
	for _, raw := range []string{"", "null", "true", "{}", " { } "} {
		tools := registry.OpenAITools([]*registry.Tool{{Tool: &packs.Tool{Name: "x", InputSchema: json.RawMessage(raw)}}}, registry.RenderOptions{})
		if got := string(tools[0].Function.Parameters); got != `{"type":"object","properties":{}}` {
			t.Errorf("input schema %q renders as %s", raw, got)
		}
	}
	// A schema with a type keeps it, whatever it is.
	tools := registry.MCPTools([]*registry.Tool{{Tool: &packs.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":["object"]}`)}}}, registry.RenderOptions{})
	if got := string(tools[0].InputSchema); got != `{"type":["object"]}` {
		t.Errorf("typed schema renders as %s", got)
	}
}

func TestRenderMCPAnnotations(t *testing.T) {
	mk := func(d packs.Tool) *registry.Tool { d.Name = "t"; return &registry.Tool{Tool: &d} }
	for _, c := range []struct {
		name string
		tool *registry.Tool
		want registry.MCPToolAnnotations
	}{
		{"pure", mk(packs.Tool{Idempotent: true}), registry.MCPToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		{"read over network", mk(packs.Tool{RequiresNetwork: true}), registry.MCPToolAnnotations{ReadOnlyHint: true, OpenWorldHint: true}},
		{"effects, auto moderate", mk(packs.Tool{SideEffects: true}), registry.MCPToolAnnotations{}},
		{"effects on files, auto dangerous", mk(packs.Tool{SideEffects: true, RequiresFilesystem: true}),
			registry.MCPToolAnnotations{DestructiveHint: true}},
		{"effects over network, auto dangerous", mk(packs.Tool{SideEffects: true, RequiresNetwork: true, Idempotent: true}),
			registry.MCPToolAnnotations{DestructiveHint: true, IdempotentHint: true, OpenWorldHint: true}},
		{"effects, declared critical", mk(packs.Tool{SideEffects: true, RiskLevel: "CRITICAL"}), registry.MCPToolAnnotations{DestructiveHint: true}},
		{"effects on files, declared safe", mk(packs.Tool{SideEffects: true, RequiresFilesystem: true, RiskLevel: "SAFE"}),
			registry.MCPToolAnnotations{}},
		{"no effects, declared dangerous", mk(packs.Tool{RiskLevel: "DANGEROUS"}), registry.MCPToolAnnotations{ReadOnlyHint: true}},
		{"title", mk(packs.Tool{DisplayName: "T"}), registry.MCPToolAnnotations{Title: "T", ReadOnlyHint: true}},
	} {
		got := registry.MCPTools([]*registry.Tool{c.tool}, registry.RenderOptions{})[0]
		if got.Annotations != c.want {
			t.Errorf("%s: annotations %+v, want %+v", c.name, got.Annotations, c.want)
		}
	}
	// false hints are written out: MCP's defaults for destructiveHint and
	// openWorldHint are true.
	b, _ := json.Marshal(registry.MCPTools([]*registry.Tool{mk(packs.Tool{})}, registry.RenderOptions{})[0].Annotations)
	if want := `{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}`; string(b) != want {
		t.Errorf("annotations JSON %s, want %s", b, want)
	}
}

func TestRenderMCPOutputSchema(t *testing.T) {
	for raw, want := range map[string]string{
		``:                                      ``,
		`{"type":"object"}`:                     `{"type":"object"}`,
		`{ "type" : "object", "required": [] }`: `{"type":"object","required":[]}`,
		`{"type":"string"}`:                     ``,
		`{"type":["object","null"]}`:            ``,
		`{"properties":{"a":{}}}`:               ``,
		`{"type":"array","items":{"type":"object"}}`: ``,
	} {
		tools := registry.MCPTools([]*registry.Tool{{Tool: &packs.Tool{Name: "x", OutputSchema: json.RawMessage(raw)}}}, registry.RenderOptions{})
		if got := string(tools[0].OutputSchema); got != want {
			t.Errorf("output schema %s renders as %q, want %q", raw, got, want)
		}
	}
}

func TestRenderExamplesOrder(t *testing.T) {
	visible, _, _ := renderFixture()
	wc := visible[0]
	want := "Examples:\n" +
		`{"text":"one"}` + "\n" +
		`{"text":"one two three"} // A typical sentence` + "\n" +
		`{"text":"x y"} // Another typical one`
	if got := registry.ExamplesBlock(wc, 0); got != want {
		t.Errorf("ExamplesBlock(n=0):\n%s\nwant:\n%s", got, want)
	}
	all := registry.ExamplesBlock(wc, 10)
	if lines := strings.Split(all, "\n"); len(lines) != 6 ||
		lines[4] != `{"text":""} // An empty text has no words` || lines[5] != `{"text":"a\tb"} // Tabs separate words too` {
		t.Errorf("ExamplesBlock(n=10):\n%s", all)
	}
	// OpenAI shows a deferred function's description up front: no
	// examples there.
	_, deferred, _ := renderFixture()
	for _, tool := range registry.OpenAIResponsesTools(nil, deferred, registry.RenderOptions{Examples: true}) {
		if strings.Contains(tool.Description, "Examples:") {
			t.Errorf("deferred %s has examples in its OpenAI description: %q", tool.Name, tool.Description)
		}
	}
	if got := registry.ExamplesBlock(&registry.Tool{Tool: &packs.Tool{Name: "none"}}, 3); got != "" {
		t.Errorf("ExamplesBlock without examples = %q", got)
	}
	// The option appends the block to every description.
	for _, tool := range registry.OpenAITools(visible, registry.RenderOptions{Examples: true, MaxExamples: 1}) {
		if tool.Function.Name == "word_count" && tool.Function.Description != "Count the words of a text.\n\nExamples:\n{\"text\":\"one\"}" {
			t.Errorf("word_count description %q", tool.Function.Description)
		}
		if tool.Function.Name == "clock_now" && tool.Function.Description != "Return the current time in RFC 3339." {
			t.Errorf("clock_now description %q", tool.Function.Description)
		}
	}
	// Without the examples' descriptions: the arguments alone.
	for _, tool := range registry.MCPTools(visible, registry.RenderOptions{Examples: true, MaxExamples: 2, OmitExampleDescriptions: true}) {
		if tool.Name == "word_count" && tool.Description != "Count the words of a text.\n\nExamples:\n{\"text\":\"one\"}\n{\"text\":\"one two three\"}" {
			t.Errorf("word_count description without example descriptions %q", tool.Description)
		}
	}
}

func TestRenderAnthropicSearch(t *testing.T) {
	visible, deferred, _ := renderFixture()
	for s, want := range map[registry.AnthropicSearch]string{
		"":                             registry.AnthropicRegexSearchType + " " + registry.AnthropicRegexSearchName,
		registry.AnthropicSearchRegex:  registry.AnthropicRegexSearchType + " " + registry.AnthropicRegexSearchName,
		registry.AnthropicSearchBM25:   registry.AnthropicBM25SearchType + " " + registry.AnthropicBM25SearchName,
		registry.AnthropicSearchClient: " clock_now", // no server tool: the first visible tool by name
	} {
		tools, err := registry.AnthropicTools(visible, deferred, s, registry.RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := tools[0].Type + " " + tools[0].Name; got != want {
			t.Errorf("search %q: first tool %q, want %q", s, got, want)
		}
		var deferredNames []string
		for _, tool := range tools {
			if tool.DeferLoading {
				deferredNames = append(deferredNames, tool.Name)
			}
		}
		if strings.Join(deferredNames, ",") != "http_get" {
			t.Errorf("search %q: deferred %v, want [http_get] (send_note is visible)", s, deferredNames)
		}
	}
	if _, err := registry.AnthropicTools(visible, deferred, "semantic", registry.RenderOptions{}); !errors.Is(err, registry.ErrRenderOption) {
		t.Errorf("unknown search: err %v, want ErrRenderOption", err)
	}
	// Nothing deferred: no search tool.
	tools, _ := registry.AnthropicTools(visible, nil, registry.AnthropicSearchBM25, registry.RenderOptions{})
	for _, tool := range tools {
		if tool.Type != "" {
			t.Errorf("no deferred tools, yet %+v", tool)
		}
	}
	b, _ := json.Marshal(registry.ToolReferences(append(deferred, deferred...)))
	if want := `[{"type":"tool_reference","tool_name":"http_get"},{"type":"tool_reference","tool_name":"send_note"}]`; string(b) != want {
		t.Errorf("ToolReferences = %s, want %s", b, want)
	}
	if b, _ := json.Marshal(registry.ToolReferences(nil)); string(b) != `[]` {
		t.Errorf("ToolReferences(nil) = %s, want []", b)
	}
}

func TestRenderSkillsBlock(t *testing.T) {
	skills := []registry.SkillSummary{{Name: "b", Description: "Second."}, {Name: "a", Description: "First\n  line."}, {Name: "a", Description: "dup"}}
	got, err := registry.SkillsBlock("Skills:\n{skills_list}\nUse load_skill.", skills)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Skills:\n- a: First line.\n- b: Second.\nUse load_skill."; got != want {
		t.Errorf("SkillsBlock = %q, want %q", got, want)
	}
	for _, tmpl := range []string{"Skills: {skill_list}", "{ skills_list }", "no placeholder"} {
		if _, err := registry.SkillsBlock(tmpl, skills); !errors.Is(err, registry.ErrTemplateNoSkillsList) {
			t.Errorf("template %q: err %v, want ErrTemplateNoSkillsList", tmpl, err)
		}
		if _, err := registry.SkillsBlock(tmpl, nil); !errors.Is(err, registry.ErrTemplateNoSkillsList) {
			t.Errorf("template %q without skills: err %v, want ErrTemplateNoSkillsList", tmpl, err)
		}
	}
	if got, err := registry.SkillsBlock("", nil); got != "" || err != nil {
		t.Errorf("no skills: %q, %v", got, err)
	}
	def, _ := registry.SkillsBlock("", skills)
	for _, name := range []string{"load_skill", "read_skill_resource", "run_skill_script", "- a: First line."} {
		if !strings.Contains(def, name) {
			t.Errorf("default template lacks %q:\n%s", name, def)
		}
	}
	if !strings.Contains(registry.SkillDiscoveryBlock(), "skill_search") || !strings.Contains(registry.SkillDiscoveryBlock(), "skill_get") {
		t.Errorf("skill discovery block: %s", registry.SkillDiscoveryBlock())
	}
	if got := registry.JoinBlocks("", " a \n", "", "b"); got != "a\n\nb" {
		t.Errorf("JoinBlocks = %q", got)
	}
}
