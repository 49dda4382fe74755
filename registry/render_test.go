package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
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
	mk := func(d packs.ToolSpec) *registry.Tool {
		return &registry.Tool{ToolSpec: &d, Kind: registry.KindWasm, Pack: "fixture", PackDescription: "Text and file tools of the fixture."}
	}
	wordCount := mk(packs.ToolSpec{
		Name: "word_count", DisplayName: "Word count", Loading: packs.LoadingAlways, Icon: "\U0001F522",
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
	fileDelete := mk(packs.ToolSpec{
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
	sendNote := mk(packs.ToolSpec{
		Name: "send_note", DisplayName: "Send note", Loading: packs.LoadingDeferred, // activated in this run
		Description: "Leave a note for the operator.",
		// No "type": the renderings add it.
		InputSchema: json.RawMessage(`{"properties":{"note":{"type":"string"}},"required":["note"]}`),
		SideEffects: true, // AUTO risk: MODERATE
	})
	clockNow := &registry.Tool{Kind: registry.KindNative, ToolSpec: &packs.ToolSpec{
		Name: "clock_now", DisplayName: "Clock now", Loading: packs.LoadingAlways,
		Description: "Return the current time in RFC 3339.",
		// No input schema, an output schema that is not an object.
		OutputSchema: json.RawMessage(`{"type":"string","format":"date-time"}`),
	}}
	// skillhost's own search: listed where it is the model's search only.
	toolSearch := &registry.Tool{Kind: registry.KindBuiltin, ToolSpec: &packs.ToolSpec{
		Name: registry.ToolSearchName, DisplayName: "Tool search", Loading: packs.LoadingAlways, Idempotent: true,
		Description: "Find tools you can use that are not in your tool list yet.",
		InputSchema: json.RawMessage(`{"type":"object","required":["query"],"properties":{"query":{"type":"string"}}}`),
	}}
	// A native tool whose name no model API carries as it is.
	weatherGet := &registry.Tool{Kind: registry.KindNative, ToolSpec: &packs.ToolSpec{
		Name: "weather.get", DisplayName: "Weather", Loading: packs.LoadingDeferred, Icon: "https://example.com/icons/weather.png",
		Description: "Current weather of a city.", RequiresNetwork: true, Idempotent: true,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}}}`),
		Examples:     []packs.Example{{Args: json.RawMessage(`{"city":"Lisbon"}`), Tags: []string{"minimal"}}},
	}}
	httpGet := mk(packs.ToolSpec{
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
	hidden = mk(packs.ToolSpec{
		Name: "admin_reset", DisplayName: "Admin reset", Loading: packs.LoadingAlways, Hidden: true,
		Description: "Reset everything.", SideEffects: true, RiskLevel: "CRITICAL",
		Examples: []packs.Example{{Args: json.RawMessage(`{}`), Description: "Reset"}},
	})
	// Unsorted on purpose, and send_note given in both lists.
	return []*registry.Tool{wordCount, sendNote, hidden, fileDelete, clockNow, toolSearch},
		[]*registry.Tool{httpGet, hidden, sendNote, weatherGet}, hidden
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
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var examples strings.Builder
	for _, tool := range registry.MCPTools(append(append([]*registry.Tool{}, visible...), deferred...), registry.RenderOptions{}) {
		for _, rt := range append(visible, deferred...) {
			if r := registry.MCPTools([]*registry.Tool{rt}, registry.RenderOptions{}); len(r) == 1 && r[0].Name == tool.Name {
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
	var prompt strings.Builder
	prompt.WriteString("## tool_search (Chat Completions, MCP)\n" +
		registry.JoinBlocks(registry.ToolDiscoveryBlock(deferred), registry.SkillDiscoveryBlock(), skills) + "\n")
	for _, s := range []registry.OpenAISearch{registry.OpenAISearchServer, registry.OpenAISearchClient} {
		prompt.WriteString("## OpenAI Responses, search " + string(s) + "\n" + must(registry.OpenAIToolDiscoveryBlock(visible, deferred, s)).(string) + "\n")
	}
	for _, s := range []registry.AnthropicSearch{registry.AnthropicSearchRegex, registry.AnthropicSearchBM25, registry.AnthropicSearchClient} {
		prompt.WriteString("## Anthropic, search " + string(s) + "\n" + must(registry.AnthropicToolDiscoveryBlock(visible, deferred, s)).(string) + "\n")
	}

	for name, got := range map[string][]byte{
		"openai_chat.json":             renderJSON(t, registry.OpenAITools(visible, withExamples)),
		"openai_responses.json":        renderJSON(t, must(registry.OpenAIResponsesTools(visible, deferred, "", withExamples))),
		"openai_responses_client.json": renderJSON(t, must(registry.OpenAIResponsesTools(visible, deferred, registry.OpenAISearchClient, registry.RenderOptions{}))),
		"openai_responses_flat.json": renderJSON(t, must(registry.OpenAIResponsesTools(visible, deferred, "",
			registry.RenderOptions{NoNamespaces: true, NoOutputSchemas: true}))),
		"openai_tool_search_output.json": renderJSON(t, registry.OpenAIToolSearchOutput(deferred, registry.RenderOptions{})),
		"anthropic.json":                 renderJSON(t, must(registry.AnthropicTools(visible, deferred, "", registry.RenderOptions{}))),
		"anthropic_folded.json": renderJSON(t, must(registry.AnthropicTools(visible, deferred, registry.AnthropicSearchClient,
			registry.RenderOptions{Examples: true, NoInputExamples: true, NoCacheControl: true}))),
		"mcp_tools.json":            renderJSON(t, registry.MCPTools(visible, withExamples)),
		"mcp_tools_2025-11-25.json": renderJSON(t, registry.MCPTools(append(visible, deferred...), registry.RenderOptions{MCPRevision: registry.MCPRevisionTasks})),
		"mcp_tools_2026-07-28.json": renderJSON(t, registry.MCPTools(append(visible, deferred...), registry.RenderOptions{MCPRevision: registry.MCPRevisionAnyOutput})),
		"tool_references.json":      renderJSON(t, registry.ToolReferences(deferred)),
		"examples.txt":              []byte(examples.String()),
		"prompt.txt":                []byte(prompt.String()),
	} {
		t.Run(name, func(t *testing.T) {
			testenv.Golden(t, filepath.Join(renderGoldenDir, name), got, renderUpdate())
		})
	}
}

// flatResponses returns the functions and other tools of a Responses
// rendering, namespaces opened.
func flatResponses(tools []registry.OpenAIResponsesTool) []registry.OpenAIResponsesTool {
	var out []registry.OpenAIResponsesTool
	for _, tool := range tools {
		if tool.Type == "namespace" {
			out = append(out, flatResponses(tool.Tools)...)
			continue
		}
		out = append(out, tool)
	}
	return out
}

// Every rendering of the fixture, as JSON or text.
func renderAll(t *testing.T, visible, deferred []*registry.Tool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, opts := range []registry.RenderOptions{{}, {Examples: true, MaxExamples: 10},
		{NoNamespaces: true, NoOutputSchemas: true, NoInputExamples: true, NoCacheControl: true, Examples: true}} {
		out["openai"] += string(renderJSON(t, registry.OpenAITools(visible, opts)))
		for _, s := range []registry.OpenAISearch{registry.OpenAISearchServer, registry.OpenAISearchClient} {
			r, err := registry.OpenAIResponsesTools(visible, deferred, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			out["responses"] += string(renderJSON(t, r))
			b, err := registry.OpenAIToolDiscoveryBlock(visible, deferred, s)
			if err != nil {
				t.Fatal(err)
			}
			out["discovery"] += b
		}
		for _, s := range []registry.AnthropicSearch{registry.AnthropicSearchRegex, registry.AnthropicSearchBM25, registry.AnthropicSearchClient} {
			a, err := registry.AnthropicTools(visible, deferred, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			out["anthropic"] += string(renderJSON(t, a))
			b, err := registry.AnthropicToolDiscoveryBlock(visible, deferred, s)
			if err != nil {
				t.Fatal(err)
			}
			out["discovery"] += b
		}
		for _, rev := range []string{"", registry.MCPRevisionTasks, registry.MCPRevisionAnyOutput} {
			opts.MCPRevision = rev
			out["mcp"] += string(renderJSON(t, registry.MCPTools(append(visible, deferred...), opts)))
		}
	}
	out["references"] = string(renderJSON(t, registry.ToolReferences(append(visible, deferred...))))
	out["search output"] = string(renderJSON(t, registry.OpenAIToolSearchOutput(append(visible, deferred...), registry.RenderOptions{})))
	for _, tool := range append(visible, deferred...) {
		out["examples"] += registry.ExamplesBlock(tool, 10)
	}
	out["discovery"] += registry.ToolDiscoveryBlock(deferred)
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
	r, _ := registry.OpenAIResponsesTools(visible, []*registry.Tool{hidden}, "", registry.RenderOptions{})
	for _, tool := range flatResponses(r) {
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
		if name == "references" || name == "examples" || name == "search output" {
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
		tools := registry.OpenAITools([]*registry.Tool{{ToolSpec: &packs.ToolSpec{Name: "x", InputSchema: json.RawMessage(raw)}}}, registry.RenderOptions{})
		if got := string(tools[0].Function.Parameters); got != `{"type":"object","properties":{}}` {
			t.Errorf("input schema %q renders as %s", raw, got)
		}
	}
	// A schema with a type keeps it, whatever it is.
	tools := registry.MCPTools([]*registry.Tool{{ToolSpec: &packs.ToolSpec{Name: "x", InputSchema: json.RawMessage(`{"type":["object"]}`)}}}, registry.RenderOptions{})
	if got := string(tools[0].InputSchema); got != `{"type":["object"]}` {
		t.Errorf("typed schema renders as %s", got)
	}
}

func TestRenderMCPAnnotations(t *testing.T) {
	mk := func(d packs.ToolSpec) *registry.Tool { d.Name = "t"; return &registry.Tool{ToolSpec: &d} }
	granted := func(d packs.ToolSpec, g host.Grant) *registry.Tool { tl := mk(d); tl.Effective = g; return tl }
	runsCode := mk(packs.ToolSpec{Idempotent: true})
	runsCode.RunsCode = true
	rw := host.Grant{Mounts: []host.Mount{{HostPath: "/srv", GuestPath: "/data"}}}
	ro := host.Grant{Mounts: []host.Mount{{HostPath: "/srv", GuestPath: "/data", ReadOnly: true}}}
	for _, c := range []struct {
		name string
		tool *registry.Tool
		want registry.MCPToolAnnotations
	}{
		{"pure", mk(packs.ToolSpec{Idempotent: true}), registry.MCPToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		{"read over network", mk(packs.ToolSpec{RequiresNetwork: true}), registry.MCPToolAnnotations{ReadOnlyHint: true, OpenWorldHint: true}},
		{"effects, auto moderate", mk(packs.ToolSpec{SideEffects: true}), registry.MCPToolAnnotations{}},
		{"effects on files, auto dangerous", mk(packs.ToolSpec{SideEffects: true, RequiresFilesystem: true}),
			registry.MCPToolAnnotations{DestructiveHint: true}},
		{"effects over network, auto dangerous", mk(packs.ToolSpec{SideEffects: true, RequiresNetwork: true, Idempotent: true}),
			registry.MCPToolAnnotations{DestructiveHint: true, IdempotentHint: true, OpenWorldHint: true}},
		{"effects, declared critical", mk(packs.ToolSpec{SideEffects: true, RiskLevel: "CRITICAL"}), registry.MCPToolAnnotations{DestructiveHint: true}},
		{"effects on files, declared safe", mk(packs.ToolSpec{SideEffects: true, RequiresFilesystem: true, RiskLevel: "SAFE"}),
			registry.MCPToolAnnotations{}},
		{"no effects, declared dangerous", mk(packs.ToolSpec{RiskLevel: "DANGEROUS"}), registry.MCPToolAnnotations{ReadOnlyHint: true}},
		{"title", mk(packs.ToolSpec{DisplayName: "T"}), registry.MCPToolAnnotations{Title: "T", ReadOnlyHint: true}},
		// The grant backs or withdraws what the flags claim.
		{"no effects declared, writable mount", granted(packs.ToolSpec{Idempotent: true}, rw),
			registry.MCPToolAnnotations{DestructiveHint: true, IdempotentHint: true}},
		{"no effects declared, read-only mount", granted(packs.ToolSpec{Idempotent: true}, ro),
			registry.MCPToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		{"no effects declared, a service", granted(packs.ToolSpec{}, host.Grant{Capabilities: []string{"mail.send"}}),
			registry.MCPToolAnnotations{DestructiveHint: true, OpenWorldHint: true}},
		{"no effects declared, tools to call", granted(packs.ToolSpec{}, host.Grant{Tools: []string{"*"}}),
			registry.MCPToolAnnotations{DestructiveHint: true}},
		{"no network declared, hosts granted", granted(packs.ToolSpec{Idempotent: true}, host.Grant{AllowedHosts: []string{"api.example.com"}}),
			registry.MCPToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: true}},
		{"effects declared moderate, writable mount", granted(packs.ToolSpec{SideEffects: true, RiskLevel: "MODERATE"}, rw),
			registry.MCPToolAnnotations{}},
		{"runs code", runsCode, registry.MCPToolAnnotations{DestructiveHint: true, OpenWorldHint: true}},
	} {
		got := registry.MCPTools([]*registry.Tool{c.tool}, registry.RenderOptions{})[0]
		if got.Annotations != c.want || registry.Annotations(c.tool) != c.want {
			t.Errorf("%s: annotations %+v, want %+v", c.name, got.Annotations, c.want)
		}
	}
	// false hints are written out: MCP's defaults for destructiveHint and
	// openWorldHint are true.
	b, _ := json.Marshal(registry.MCPTools([]*registry.Tool{mk(packs.ToolSpec{})}, registry.RenderOptions{})[0].Annotations)
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
		tools := registry.MCPTools([]*registry.Tool{{ToolSpec: &packs.ToolSpec{Name: "x", OutputSchema: json.RawMessage(raw)}}}, registry.RenderOptions{})
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
	r, _ := registry.OpenAIResponsesTools(nil, deferred, "", registry.RenderOptions{Examples: true})
	for _, tool := range flatResponses(r) {
		if strings.Contains(tool.Description, "Examples:") {
			t.Errorf("deferred %s has examples in its OpenAI description: %q", tool.Name, tool.Description)
		}
	}
	if got := registry.ExamplesBlock(&registry.Tool{ToolSpec: &packs.ToolSpec{Name: "none"}}, 3); got != "" {
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
		if want := "http_get," + packs.APIToolName("weather.get"); strings.Join(deferredNames, ",") != want {
			t.Errorf("search %q: deferred %v, want %s (send_note is visible)", s, deferredNames, want)
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
	if want := `[{"type":"tool_reference","tool_name":"http_get"},{"type":"tool_reference","tool_name":"send_note"},` +
		`{"type":"tool_reference","tool_name":"` + packs.APIToolName("weather.get") + `"}]`; string(b) != want {
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

// Each rendering offers the model one search: the API's own where it is
// listed, skillhost's tool_search where it is the search, and none when
// nothing is deferred or a client search has no tool_search to answer.
func TestRenderOneSearchTool(t *testing.T) {
	visible, deferred, _ := renderFixture()
	var withoutOwn []*registry.Tool
	for _, tl := range visible {
		if tl.Name != registry.ToolSearchName {
			withoutOwn = append(withoutOwn, tl)
		}
	}
	for _, c := range []struct {
		name              string
		visible           []*registry.Tool
		deferred          []*registry.Tool
		openai            registry.OpenAISearch
		anthropic         registry.AnthropicSearch
		wantOpenAI        string // the search tool listed: type, execution
		wantAnthropic     string // the search tool listed: its name
		openAIDeferred    bool
		anthropicDeferred bool
	}{
		{"server", visible, deferred, registry.OpenAISearchServer, registry.AnthropicSearchRegex,
			"tool_search ", registry.AnthropicRegexSearchName, true, true},
		{"bm25", visible, deferred, registry.OpenAISearchServer, registry.AnthropicSearchBM25,
			"tool_search ", registry.AnthropicBM25SearchName, true, true},
		{"client", visible, deferred, registry.OpenAISearchClient, registry.AnthropicSearchClient,
			"tool_search client", registry.ToolSearchName, true, true},
		{"client without tool_search", withoutOwn, deferred, registry.OpenAISearchClient, registry.AnthropicSearchClient,
			"", "", false, false},
		{"nothing deferred", visible, nil, registry.OpenAISearchServer, registry.AnthropicSearchRegex, "", "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := registry.OpenAIResponsesTools(c.visible, c.deferred, c.openai, registry.RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var searches []string
			deferredSeen := false
			for _, tool := range flatResponses(r) {
				if tool.Type == "tool_search" {
					searches = append(searches, tool.Type+" "+tool.Execution)
				}
				if tool.Name == registry.ToolSearchName {
					t.Errorf("openai: skillhost's tool_search is a function of %+v", r)
				}
				deferredSeen = deferredSeen || tool.DeferLoading
			}
			if strings.Join(searches, ",") != c.wantOpenAI || deferredSeen != c.openAIDeferred {
				t.Errorf("openai: search tools %q and deferred %v, want %q and %v", searches, deferredSeen, c.wantOpenAI, c.openAIDeferred)
			}
			if c.openai == registry.OpenAISearchClient && c.wantOpenAI != "" {
				for _, tool := range r {
					if tool.Type == "tool_search" && (!strings.HasPrefix(tool.Description, "Find tools") || len(tool.Parameters) == 0) {
						t.Errorf("client tool search %+v lacks tool_search's description and parameters", tool)
					}
				}
			}
			a, err := registry.AnthropicTools(c.visible, c.deferred, c.anthropic, registry.RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			searches, deferredSeen = nil, false
			for _, tool := range a {
				if tool.Type != "" || tool.Name == registry.ToolSearchName {
					searches = append(searches, tool.Name)
				}
				deferredSeen = deferredSeen || tool.DeferLoading
			}
			want := c.wantAnthropic
			if c.anthropic == registry.AnthropicSearchClient && c.name == "client" {
				want = registry.ToolSearchName
			}
			if strings.Join(searches, ",") != want || deferredSeen != c.anthropicDeferred {
				t.Errorf("anthropic: search tools %q and deferred %v, want %q and %v", searches, deferredSeen, want, c.anthropicDeferred)
			}
			// The prompt block names the search listed, or is empty.
			ob, _ := registry.OpenAIToolDiscoveryBlock(c.visible, c.deferred, c.openai)
			ab, _ := registry.AnthropicToolDiscoveryBlock(c.visible, c.deferred, c.anthropic)
			if (ob != "") != (c.wantOpenAI != "") || (ab != "") != (c.wantAnthropic != "") ||
				(ab != "" && !strings.Contains(ab, "call "+c.wantAnthropic+" ")) {
				t.Errorf("prompt blocks %q and %q", ob, ab)
			}
		})
	}
	if _, err := registry.OpenAIResponsesTools(visible, deferred, "hosted", registry.RenderOptions{}); !errors.Is(err, registry.ErrRenderOption) {
		t.Errorf("unknown openai search: %v, want ErrRenderOption", err)
	}
}
