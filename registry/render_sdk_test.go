package registry_test

// The renderings checked against the official SDKs' request types: each
// rendered tool is decoded into the SDK's param type and encoded back,
// and must come back as it went (the param types drop what they do not
// know, so a misspelt or unknown field fails, and so does a value of the
// wrong shape), with the fields that matter set on the SDK's side. The
// SDKs are openai-go v3 and anthropic-sdk-go v2 at the versions go.mod
// pins; MCP renderings are validated against the published schemas
// (testdata/mcp-schema) instead.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/skillhost/skillhost/index"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// roundTrip decodes doc into a T and encodes it back; the result must
// equal doc as JSON.
func roundTrip[T any](t *testing.T, what string, doc []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Errorf("%s: %T refuses it: %v\n%s", what, v, err, doc)
		return v
	}
	back, err := json.Marshal(v)
	if err != nil {
		t.Errorf("%s: %T does not encode back: %v", what, v, err)
		return v
	}
	var want, got any
	json.Unmarshal(doc, &want)
	json.Unmarshal(back, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: through %T it changes (-rendered +SDK):\n%s", what, v, diff)
	}
	return v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkName holds a rendered name to the strictest API rule.
func checkName(t *testing.T, what, name string) {
	t.Helper()
	if !apiNameRE.MatchString(name) {
		t.Errorf("%s: name %q breaks %s", what, name, apiNameRE)
	}
}

// checkParameters holds a rendered input schema to what OpenAI and
// Anthropic require of it: an object schema with properties (OpenAI:
// "object schema missing properties" otherwise).
func checkParameters(t *testing.T, what string, schema any) {
	t.Helper()
	b, _ := json.Marshal(schema)
	var root struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(b, &root) != nil || root.Type != "object" || len(root.Properties) == 0 || root.Properties[0] != '{' {
		t.Errorf("%s: parameters %s are not an object schema with properties", what, b)
	}
}

// checkOpenAIRendering checks every OpenAI rendering of visible and
// deferred tools with opts against openai-go's param types.
func checkOpenAIRendering(t *testing.T, visible, deferred []*registry.Tool, opts registry.RenderOptions) {
	t.Helper()
	for _, ct := range registry.OpenAITools(visible, opts) {
		p := roundTrip[openai.ChatCompletionToolUnionParam](t, "chat "+ct.Function.Name, mustJSON(t, ct))
		if p.OfFunction == nil {
			t.Errorf("chat %s: not a function tool", ct.Function.Name)
			continue
		}
		checkName(t, "chat", p.OfFunction.Function.Name)
		checkParameters(t, "chat "+ct.Function.Name, p.OfFunction.Function.Parameters)
	}
	for _, search := range []registry.OpenAISearch{registry.OpenAISearchServer, registry.OpenAISearchClient} {
		rendered, err := registry.OpenAIResponsesTools(visible, deferred, search, opts)
		if err != nil {
			t.Fatal(err)
		}
		searches := 0
		for _, rt := range rendered {
			p := roundTrip[responses.ToolUnionParam](t, "responses "+rt.Type+" "+rt.Name, mustJSON(t, rt))
			switch {
			case p.OfFunction != nil:
				checkName(t, "responses", p.OfFunction.Name)
				checkParameters(t, "responses "+p.OfFunction.Name, p.OfFunction.Parameters)
				if p.OfFunction.Name == registry.ToolSearchName {
					t.Errorf("responses (%s): skillhost's tool_search listed as a function beside the search tool", search)
				}
			case p.OfNamespace != nil:
				if p.OfNamespace.Name == "" || p.OfNamespace.Description == "" || len(p.OfNamespace.Tools) == 0 {
					t.Errorf("responses namespace %+v: name, description and tools are required", p.OfNamespace)
				}
				for _, m := range p.OfNamespace.Tools {
					if m.OfFunction == nil {
						t.Errorf("namespace %s: a member is not a function", p.OfNamespace.Name)
						continue
					}
					checkName(t, "namespace member", m.OfFunction.Name)
					checkParameters(t, "namespace member "+m.OfFunction.Name, m.OfFunction.Parameters)
				}
			case p.OfToolSearch != nil:
				searches++
				if string(p.OfToolSearch.Execution) != map[registry.OpenAISearch]string{registry.OpenAISearchServer: "", registry.OpenAISearchClient: "client"}[search] {
					t.Errorf("responses (%s): tool search execution %q", search, p.OfToolSearch.Execution)
				}
			default:
				t.Errorf("responses: %s is no tool skillhost renders", mustJSON(t, rt))
			}
		}
		if searches > 1 {
			t.Errorf("responses (%s): %d tool search tools", search, searches)
		}
	}
	out := mustJSON(t, map[string]any{"type": "tool_search_output", "tools": registry.OpenAIToolSearchOutput(deferred, opts)})
	roundTrip[responses.ResponseToolSearchOutputItemParam](t, "tool_search_output", out)
}

// checkAnthropicRendering checks every Anthropic rendering against
// anthropic-sdk-go's param types.
func checkAnthropicRendering(t *testing.T, visible, deferred []*registry.Tool, opts registry.RenderOptions) {
	t.Helper()
	for _, search := range []registry.AnthropicSearch{registry.AnthropicSearchRegex, registry.AnthropicSearchBM25, registry.AnthropicSearchClient} {
		rendered, err := registry.AnthropicTools(visible, deferred, search, opts)
		if err != nil {
			t.Fatal(err)
		}
		searches, breakpoints := 0, 0
		for _, at := range rendered {
			p := roundTrip[anthropic.ToolUnionParam](t, "anthropic "+at.Name, mustJSON(t, at))
			switch {
			case p.OfTool != nil:
				checkName(t, "anthropic", p.OfTool.Name)
				checkParameters(t, "anthropic "+p.OfTool.Name, p.OfTool.InputSchema)
				if p.OfTool.Name == registry.ToolSearchName {
					searches++
				}
				if p.OfTool.CacheControl.Type != "" {
					breakpoints++
				}
			case p.OfToolSearchToolRegex20251119 != nil, p.OfToolSearchToolBm25_20251119 != nil:
				searches++
				breakpoints += len(strings.Split(string(mustJSON(t, at)), "cache_control")) - 1
			default:
				t.Errorf("anthropic: %s is no tool skillhost renders", mustJSON(t, at))
			}
		}
		if searches > 1 {
			t.Errorf("anthropic (%s): %d search tools", search, searches)
		}
		if breakpoints > 1 {
			t.Errorf("anthropic (%s): %d cache breakpoints", search, breakpoints)
		}
	}
	for _, ref := range registry.ToolReferences(append(visible, deferred...)) {
		p := roundTrip[anthropic.ToolReferenceBlockParam](t, "tool_reference", mustJSON(t, ref))
		checkName(t, "tool_reference", p.ToolName)
	}
}

// checkMCPRendering validates every MCP rendering against the Tool
// definition of each published revision, and for revisions whose rules
// a rendering option follows, against that revision.
func checkMCPRendering(t *testing.T, tools []*registry.Tool, opts registry.RenderOptions) {
	t.Helper()
	for _, rev := range []string{"", registry.MCPRevisionTasks, registry.MCPRevisionAnyOutput} {
		opts.MCPRevision = rev
		revs := testenv.MCPRevisions
		if rev == registry.MCPRevisionAnyOutput {
			revs = []string{rev} // earlier revisions require an object outputSchema
		}
		for _, mt := range registry.MCPTools(tools, opts) {
			checkName(t, "mcp", mt.Name)
			doc := mustJSON(t, mt)
			for _, r := range revs {
				if err := testenv.ValidateMCP(r, "Tool", doc); err != nil {
					t.Errorf("mcp (rendered for %q) %s is not a valid %s Tool: %v\n%s", rev, mt.Name, r, err, doc)
				}
			}
		}
	}
}

// optionSets are the rendering options every check runs with: the
// defaults, examples in descriptions, and every feature turned off.
var optionSets = []registry.RenderOptions{
	{},
	{Examples: true, MaxExamples: 5},
	{Examples: true, NoNamespaces: true, NoOutputSchemas: true, NoInputExamples: true, NoCacheControl: true, OmitExampleDescriptions: true},
}

// checkEveryRendering runs the SDK and schema checks over the tools of
// reg, the tools loaded always as visible and the others deferred.
func checkEveryRendering(t *testing.T, reg *registry.Registry) {
	t.Helper()
	var visible, deferred []*registry.Tool
	for _, tl := range reg.Tools() {
		if tl.Loading == packs.LoadingAlways {
			visible = append(visible, tl)
		} else {
			deferred = append(deferred, tl)
		}
	}
	for _, opts := range optionSets {
		checkOpenAIRendering(t, visible, deferred, opts)
		checkAnthropicRendering(t, visible, deferred, opts)
		checkMCPRendering(t, reg.Tools(), opts)
	}
}

// Every built-in and every tool of the bundled pack, rendered for each
// API with each set of options, is what the API's official SDK or
// published schema accepts, and comes through it unchanged.
func TestRenderingsMatchTheSDKs(t *testing.T) {
	ctx := context.Background()
	cat, err := packs.LoadCatalog(ctx, []packs.SourceSpec{packs.BundledSource()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	set, err := registry.NewSkillSet(registry.SkillSetOptions{Files: cat.Skills})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(ctx, cat, registry.Options{Host: newHost(t),
		Builtins: allBuiltins(registry.BuiltinOptions{Index: idx, Skills: set})})
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	checkEveryRendering(t, reg)
}

// hostileNative is a native tool with whatever description it is given.
type hostileNative struct{ d packs.ToolSpec }

func (n hostileNative) Describe() packs.ToolSpec { return n.d }
func (hostileNative) Execute(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

// Registrations made to break the renderings (names no API carries,
// schemas OpenAI refuses, examples that do not match, odd icons and
// output schemas) come out in forms every API accepts.
func TestHostileRegistrationsRenderValid(t *testing.T) {
	mk := func(name string, d packs.ToolSpec) registry.Native {
		d.Name = name
		if d.Description == "" {
			d.Description = "A tool registered to break the renderings."
		}
		return hostileNative{d}
	}
	natives := []registry.Native{
		mk("weather.get", packs.ToolSpec{Loading: packs.LoadingAlways, Icon: "\U0001F326\ufe0f"}),
		mk("Get Weather", packs.ToolSpec{Loading: packs.LoadingDeferred}),
		mk(strings.Repeat("long_name_", 7), packs.ToolSpec{Loading: packs.LoadingDeferred}),
		mk(strings.Repeat("é", 128), packs.ToolSpec{Loading: packs.LoadingAlways}),
		mk("map_input", packs.ToolSpec{Loading: packs.LoadingAlways,
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":{"type":"string"}}`)}),
		mk("ref_root", packs.ToolSpec{Loading: packs.LoadingDeferred,
			InputSchema: json.RawMessage(`{"$ref":"#/$defs/in","$defs":{"in":{"type":"object","properties":{"q":{"type":"string"}}}}}`)}),
		mk("true_root", packs.ToolSpec{Loading: packs.LoadingAlways, InputSchema: json.RawMessage(`true`),
			OutputSchema: json.RawMessage(`true`)}),
		mk("list_output", packs.ToolSpec{Loading: packs.LoadingAlways,
			OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`)}),
		mk("bad_examples", packs.ToolSpec{Loading: packs.LoadingAlways,
			InputSchema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`),
			Examples: []packs.Example{{Args: json.RawMessage(`{"n":"not a number"}`)}, {Args: json.RawMessage(`[1]`)},
				{Args: json.RawMessage(`{"n":1}`), Description: "the only valid one"}}}),
		mk("name_icon", packs.ToolSpec{Loading: packs.LoadingAlways, Icon: "search", Description: "<b>html</b> & \"quotes\"\n\nand lines"}),
		mk("url_icon", packs.ToolSpec{Loading: packs.LoadingDeferred, Icon: "https://example.com/i.webp"}),
	}
	reg, err := registry.New(context.Background(), nil, registry.Options{Natives: natives})
	if err != nil {
		t.Fatal(err)
	}
	checkEveryRendering(t, reg)

	// The examples shown are the valid ones only.
	tl, _ := reg.Tool("bad_examples")
	a, err := registry.AnthropicTools([]*registry.Tool{tl}, nil, "", registry.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(mustJSON(t, a[0].InputExamples)); got != `[{"n":1}]` {
		t.Errorf("input_examples %s, want the one valid example", got)
	}
	if !reflect.DeepEqual(a[0].CacheControl, &registry.AnthropicCacheControl{Type: "ephemeral"}) {
		t.Errorf("the last tool loaded up front has cache_control %+v", a[0].CacheControl)
	}
}
