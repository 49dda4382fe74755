package registry

// Renderings of a run's tool catalog for model APIs and prompts.
//
// Every function here is pure: it reads the tools it is given and nothing
// else. A caller passes the tools visible now (Run.Tools) and, for the
// renderings that support deferred loading, the tools the run may still
// activate (Run.Deferred). Hidden tools are dropped from every rendering;
// tools come out sorted by name (the visible ones, then the deferred
// ones), a name given twice once (visible wins over deferred); schemas are
// the tools' raw JSON, compacted, never re-encoded, so equal catalogs
// render to equal bytes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skillhost/skillhost/packs"
)

// DefaultMaxExamples is how many examples a tool shows when
// RenderOptions.MaxExamples (or ExamplesBlock's n) is zero.
const DefaultMaxExamples = 3

// Example tags, in the order examples are preferred: the smallest valid
// call first, then a typical one, then a corner case. Tags are compared
// lowercased, with "_" and spaces read as "-" ("edge_case" is EdgeCase).
const (
	ExampleMinimal  = "minimal"
	ExampleCommon   = "common"
	ExampleEdgeCase = "edge-case"
)

// RenderOptions are the options shared by the tool renderings. The zero
// value renders descriptions as declared.
type RenderOptions struct {
	// Examples appends ExamplesBlock to each tool's description.
	Examples bool
	// MaxExamples caps the examples per tool; 0 means
	// DefaultMaxExamples.
	MaxExamples int
	// OmitExampleDescriptions shows each example's arguments without its
	// description.
	OmitExampleDescriptions bool
}

// emptyObjectSchema is the input schema of a tool that declares none.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// ---- OpenAI ----------------------------------------------------------

// OpenAITool is a tool of an OpenAI Chat Completions request:
// {"type":"function","function":{...}}.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an OpenAITool. Strict is never set:
// skillhost validates arguments against the whole schema itself, and
// strict mode accepts only a subset of JSON Schema.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OpenAITools renders the visible tools for OpenAI Chat Completions
// function calling. Parameters is the input schema, with "type":"object"
// added when it has no type, or {"type":"object","properties":{}} when the
// tool declares none.
//
// Chat Completions has no deferred loading (its function definition has
// no defer_loading field); OpenAI's tool search belongs to the Responses
// API, see OpenAIResponsesTools.
func OpenAITools(visible []*Tool, opts RenderOptions) []OpenAITool {
	out := []OpenAITool{}
	for _, t := range catalog(visible) {
		out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{
			Name: t.Name, Description: describe(t, opts), Parameters: inputSchema(t.InputSchema),
		}})
	}
	return out
}

// OpenAIResponsesTool is a tool of an OpenAI Responses request: a
// function ({"type":"function","name",…}, flat, unlike Chat Completions)
// or the tool search tool ({"type":"tool_search"}).
type OpenAIResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Strict is false for every function (see OpenAIFunction); it is
	// written out because the Responses API's function tool has the field
	// required (nullable), and older revisions of it defaulted to true.
	Strict *bool `json:"strict,omitempty"`
	// DeferLoading marks a function the model reaches through tool
	// search: it sees the name and description, and the schema is loaded
	// when a search returns the function.
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// OpenAIResponsesTools renders a catalog for the OpenAI Responses API:
// the visible tools as functions, then the deferred ones with
// "defer_loading": true, then, when any tool is deferred, the hosted tool
// search tool {"type":"tool_search"} (OpenAI runs the search over the
// deferred functions of the request, which are exactly the tools this
// run may activate). The model is shown a deferred function's name and
// description from the start, so examples (opts.Examples) are added to
// the visible functions only: the deferred ones would pay for them in
// every request.
//
// Verified against the openai-python SDK's generated Responses types
// (FunctionTool: flat name, description, parameters, strict,
// defer_loading; ToolSearchTool: type "tool_search", execution "server"
// by default or "client") and OpenAI's tool search guide (add tool_search
// to the tools, mark functions defer_loading: true).
func OpenAIResponsesTools(visible, deferred []*Tool, opts RenderOptions) []OpenAIResponsesTool {
	vis, def := split(visible, deferred)
	out := []OpenAIResponsesTool{}
	for _, t := range vis {
		out = append(out, OpenAIResponsesTool{Type: "function", Name: t.Name, Description: describe(t, opts),
			Parameters: inputSchema(t.InputSchema), Strict: new(bool)})
	}
	for _, t := range def {
		out = append(out, OpenAIResponsesTool{Type: "function", Name: t.Name, Description: t.Description,
			Parameters: inputSchema(t.InputSchema), Strict: new(bool), DeferLoading: true})
	}
	if len(def) > 0 {
		out = append(out, OpenAIResponsesTool{Type: "tool_search"})
	}
	return out
}

// ---- Anthropic -------------------------------------------------------

// AnthropicSearch says which tool search a rendering for Anthropic's
// Messages API offers for deferred tools.
type AnthropicSearch string

// Anthropic tool search variants.
const (
	// AnthropicSearchRegex is the server tool that searches with regular
	// expressions (type tool_search_tool_regex_20251119); the default.
	AnthropicSearchRegex AnthropicSearch = "regex"
	// AnthropicSearchBM25 is the server tool that searches with natural
	// language queries (type tool_search_tool_bm25_20251119).
	AnthropicSearchBM25 AnthropicSearch = "bm25"
	// AnthropicSearchClient adds no server tool: the run's own search
	// tool (skillhost's tool_search, among the visible tools) answers, and
	// its results go back as ToolReferences blocks.
	AnthropicSearchClient AnthropicSearch = "client"
)

// The Anthropic tool search server tools: type and name.
const (
	AnthropicRegexSearchType = "tool_search_tool_regex_20251119"
	AnthropicRegexSearchName = "tool_search_tool_regex"
	AnthropicBM25SearchType  = "tool_search_tool_bm25_20251119"
	AnthropicBM25SearchName  = "tool_search_tool_bm25"
)

// ErrRenderOption is returned for a rendering option that has no meaning.
var ErrRenderOption = errors.New("registry: invalid render option")

// AnthropicTool is a tool of an Anthropic Messages request: a custom tool
// {"name","description","input_schema"} (with "defer_loading": true when
// deferred), or a tool search server tool {"type","name"}.
type AnthropicTool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

// AnthropicTools renders a catalog for Anthropic's Messages API: when any
// tool is deferred, the tool search server tool of search first (none for
// AnthropicSearchClient; "" means AnthropicSearchRegex), then the visible
// tools, then the deferred ones with "defer_loading": true. The model
// sees a deferred tool only once a search returns a reference to it.
//
// Verified against the anthropic-sdk-python SDK's generated Messages
// types (ToolParam: name, description, input_schema, defer_loading;
// ToolSearchToolRegex20251119Param and ToolSearchToolBm25_20251119Param:
// type and fixed name; ToolReferenceBlockParam {"type":"tool_reference",
// "tool_name"} as tool_result content) and Anthropic's tool search guide.
// Earlier API versions needed the advanced-tool-use-2025-11-20 beta
// header; setting headers is the caller's part.
func AnthropicTools(visible, deferred []*Tool, search AnthropicSearch, opts RenderOptions) ([]AnthropicTool, error) {
	var server *AnthropicTool
	switch search {
	case "", AnthropicSearchRegex:
		server = &AnthropicTool{Type: AnthropicRegexSearchType, Name: AnthropicRegexSearchName}
	case AnthropicSearchBM25:
		server = &AnthropicTool{Type: AnthropicBM25SearchType, Name: AnthropicBM25SearchName}
	case AnthropicSearchClient:
	default:
		return nil, fmt.Errorf("%w: anthropic search %q, want %q, %q or %q", ErrRenderOption, search,
			AnthropicSearchRegex, AnthropicSearchBM25, AnthropicSearchClient)
	}
	vis, def := split(visible, deferred)
	out := []AnthropicTool{}
	if len(def) > 0 && server != nil {
		out = append(out, *server)
	}
	add := func(t *Tool, deferLoading bool) {
		out = append(out, AnthropicTool{Name: t.Name, Description: describe(t, opts),
			InputSchema: inputSchema(t.InputSchema), DeferLoading: deferLoading})
	}
	for _, t := range vis {
		add(t, false)
	}
	for _, t := range def {
		add(t, true)
	}
	return out, nil
}

// ToolReference is an Anthropic tool_reference content block: put in a
// tool_result, it loads the named deferred tool's definition.
type ToolReference struct {
	Type     string `json:"type"`
	ToolName string `json:"tool_name"`
}

// ToolReferences renders the tools a search found as the content of its
// tool_result: [{"type":"tool_reference","tool_name":"…"}], in the order
// given (a search's ranking), each name once, hidden tools left out. A
// reference is only valid for a tool the request lists, so pass tools of
// the run's catalog.
func ToolReferences(found []*Tool) []ToolReference {
	out := []ToolReference{}
	seen := map[string]bool{}
	for _, t := range found {
		if t == nil || t.Tool == nil || t.Hidden || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		out = append(out, ToolReference{Type: "tool_reference", ToolName: t.Name})
	}
	return out
}

// ---- MCP -------------------------------------------------------------

// MCPTool is an entry of an MCP tools/list result (revision 2025-11-25).
type MCPTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the tool's output schema when its root is an object
	// schema, as MCP requires; nil otherwise.
	OutputSchema json.RawMessage    `json:"outputSchema,omitempty"`
	Annotations  MCPToolAnnotations `json:"annotations"`
}

// MCPToolAnnotations are an MCP tool's behaviour hints. Every hint is
// written out, false included: MCP's defaults for destructiveHint and
// openWorldHint are true, so a missing false would read as true.
type MCPToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// MCPTools renders the visible tools as MCP tools/list entries, sorted by
// name. Title is the display name. Annotations come from the
// description:
//
//   - readOnlyHint: no side effects;
//   - destructiveHint: side effects and a risk level (Risk) of DANGEROUS
//     or CRITICAL; a tool with side effects at SAFE or MODERATE is
//     rendered as one whose effects are additive;
//   - idempotentHint: Idempotent;
//   - openWorldHint: RequiresNetwork.
//
// outputSchema is set only when the tool declares one whose root "type"
// is "object": MCP requires an object there, and wrapping another schema
// in one would promise structuredContent of a shape the tool's result
// does not have.
func MCPTools(visible []*Tool, opts RenderOptions) []MCPTool {
	out := []MCPTool{}
	for _, t := range catalog(visible) {
		out = append(out, MCPTool{
			Name: t.Name, Title: t.DisplayName, Description: describe(t, opts),
			InputSchema: inputSchema(t.InputSchema), OutputSchema: objectSchema(t.OutputSchema),
			Annotations: mcpAnnotations(t.Tool),
		})
	}
	return out
}

// mcpAnnotations derives a tool's MCP hints from its description.
func mcpAnnotations(d *packs.Tool) MCPToolAnnotations {
	risk := strings.ToUpper(d.Risk())
	return MCPToolAnnotations{
		Title:           d.DisplayName,
		ReadOnlyHint:    !d.SideEffects,
		DestructiveHint: d.SideEffects && (risk == "DANGEROUS" || risk == "CRITICAL"),
		IdempotentHint:  d.Idempotent,
		OpenWorldHint:   d.RequiresNetwork,
	}
}

// ---- Examples --------------------------------------------------------

// ExamplesBlock renders at most n of t's examples (n < 1 means
// DefaultMaxExamples), one line each: the arguments as compact JSON, then
// the example's description as a comment.
//
//	Examples:
//	{"text":"one two"} // two words
//
// Examples tagged ExampleMinimal come first, then ExampleCommon, then
// ExampleEdgeCase, then the rest, each group in declared order. It
// returns "" for a tool without examples and for a hidden tool.
func ExamplesBlock(t *Tool, n int) string { return examplesBlock(t, n, true) }

// examplesBlock is ExamplesBlock, with the examples' descriptions or
// without.
func examplesBlock(t *Tool, n int, descriptions bool) string {
	if t == nil || t.Tool == nil || t.Hidden {
		return ""
	}
	if n < 1 {
		n = DefaultMaxExamples
	}
	type ranked struct {
		rank int
		ex   *packs.Example
	}
	var all []ranked
	for i := range t.Examples {
		all = append(all, ranked{exampleRank(t.Examples[i].Tags), &t.Examples[i]})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].rank < all[j].rank })
	var b strings.Builder
	shown := 0
	for _, r := range all {
		if shown == n {
			break
		}
		var args bytes.Buffer
		if err := json.Compact(&args, r.ex.Args); err != nil || args.Len() == 0 {
			continue // the registry holds only valid examples; skip rather than show a broken one
		}
		if shown == 0 {
			b.WriteString("Examples:")
		}
		b.WriteByte('\n')
		b.Write(args.Bytes())
		if d := oneLineText(r.ex.Description); d != "" && descriptions {
			b.WriteString(" // ")
			b.WriteString(d)
		}
		shown++
	}
	return b.String()
}

// exampleRank is the preference of an example with tags: 0 minimal,
// 1 common, 2 edge case, 3 anything else.
func exampleRank(tags []string) int {
	rank := 3
	for _, tag := range tags {
		tag = strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(strings.TrimSpace(tag)))
		switch tag {
		case ExampleMinimal:
			rank = min(rank, 0)
		case ExampleCommon:
			rank = min(rank, 1)
		case ExampleEdgeCase:
			rank = min(rank, 2)
		}
	}
	return rank
}

// ---- Prompt blocks ---------------------------------------------------

// ToolDiscoveryBlock returns the <tool_discovery> block telling the model
// that more tools can be found with tool_search, or "" when deferred has
// no tool to find (hidden tools do not count). It names no tool: what a
// search returns is already limited to the tools this request may use.
func ToolDiscoveryBlock(deferred []*Tool) string {
	if len(catalog(deferred)) == 0 {
		return ""
	}
	return "<tool_discovery>\n" +
		"The tools listed are not all you can use. To find another, call tool_search with a few words " +
		"describing what you need; a tool it returns can then be called like any listed tool. " +
		"Search only returns tools this request is allowed to use.\n" +
		"</tool_discovery>"
}

// SkillDiscoveryBlock returns the <skill_discovery> block telling the
// model how to find and read skills. The bounded list of known skills is
// the <skill_directory> block of index.Directory.Render.
func SkillDiscoveryBlock() string {
	return "<skill_discovery>\n" +
		"Skills are written procedures for recurring tasks. Before a task that may have one, call " +
		"skill_search with a short description of it, then skill_get with the names of the skills " +
		"that fit to read their steps.\n" +
		"</skill_discovery>"
}

// SkillsListPlaceholder is where SkillsBlock puts the skill lines in an
// instruction template.
const SkillsListPlaceholder = "{skills_list}"

// DefaultSkillsTemplate is the instruction template SkillsBlock uses when
// given "".
const DefaultSkillsTemplate = "<skills>\n" +
	"These skills are available. When a task matches one, call load_skill with its name to read its " +
	"instructions and follow them; use read_skill_resource for a file the skill refers to and " +
	"run_skill_script to run one of its scripts.\n" +
	SkillsListPlaceholder + "\n" +
	"</skills>"

// ErrTemplateNoSkillsList is returned by SkillsBlock for an instruction
// template without SkillsListPlaceholder.
var ErrTemplateNoSkillsList = errors.New("registry: instruction_template must contain " + SkillsListPlaceholder)

// SkillSummary is a skill as a listing shows it.
type SkillSummary struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SkillsBlock renders the skills through an instruction template ("" means
// DefaultSkillsTemplate): each occurrence of {skills_list} becomes one line
// per skill, "- name: description" (the description on one line; "- name"
// without one), sorted by name, each name once. A template without
// {skills_list} is an error matching ErrTemplateNoSkillsList, whether or
// not there are skills. With no skills it returns "".
func SkillsBlock(template string, skills []SkillSummary) (string, error) {
	if template == "" {
		template = DefaultSkillsTemplate
	}
	if !strings.Contains(template, SkillsListPlaceholder) {
		return "", ErrTemplateNoSkillsList
	}
	sorted := slices.Clone(skills)
	slices.SortStableFunc(sorted, func(a, b SkillSummary) int { return strings.Compare(a.Name, b.Name) })
	var lines []string
	for i, s := range sorted {
		if s.Name == "" || (i > 0 && sorted[i-1].Name == s.Name) {
			continue
		}
		line := "- " + s.Name
		if d := oneLineText(s.Description); d != "" {
			line += ": " + d
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "", nil
	}
	return strings.ReplaceAll(template, SkillsListPlaceholder, strings.Join(lines, "\n")), nil
}

// JoinBlocks joins prompt blocks with a blank line between them, leaving
// out empty ones.
func JoinBlocks(blocks ...string) string {
	var kept []string
	for _, b := range blocks {
		if b = strings.TrimSpace(b); b != "" {
			kept = append(kept, b)
		}
	}
	return strings.Join(kept, "\n\n")
}

// ---- helpers ---------------------------------------------------------

// catalog returns the tools to render: not hidden, sorted by name, each
// name once.
func catalog(tools []*Tool) []*Tool {
	out := make([]*Tool, 0, len(tools))
	for _, t := range tools {
		if t != nil && t.Tool != nil && !t.Hidden {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b *Tool) bool { return a.Name == b.Name })
}

// split returns the visible and deferred tools to render; a tool in both
// is rendered visible.
func split(visible, deferred []*Tool) (vis, def []*Tool) {
	vis = catalog(visible)
	shown := make(map[string]bool, len(vis))
	for _, t := range vis {
		shown[t.Name] = true
	}
	for _, t := range catalog(deferred) {
		if !shown[t.Name] {
			def = append(def, t)
		}
	}
	return vis, def
}

// describe returns t's description, with its examples when opts asks.
func describe(t *Tool, opts RenderOptions) string {
	if !opts.Examples {
		return t.Description
	}
	ex := examplesBlock(t, opts.MaxExamples, !opts.OmitExampleDescriptions)
	switch {
	case ex == "":
		return t.Description
	case strings.TrimSpace(t.Description) == "":
		return ex
	}
	return strings.TrimRight(t.Description, " \t\n") + "\n\n" + ex
}

// inputSchema returns a tool's input schema for a rendering, compacted:
// emptyObjectSchema when it declares none ({} and true included), with
// "type":"object" put first when it has no "type". A schema that is not
// JSON (never held by the registry, which compiles every schema) renders
// as emptyObjectSchema too.
func inputSchema(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return emptyObjectSchema
	}
	s := buf.Bytes()
	switch string(s) {
	case "", "null", "true", "{}":
		return emptyObjectSchema
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(s, &top) != nil {
		return s // a boolean false schema: passed as it is
	}
	if _, ok := top["type"]; !ok {
		return append([]byte(`{"type":"object",`), s[1:]...)
	}
	return s
}

// objectSchema returns raw compacted when its root "type" is "object",
// nil otherwise.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Compact(&buf, raw) != nil {
		return nil
	}
	var top struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(buf.Bytes(), &top) != nil || string(top.Type) != `"object"` {
		return nil
	}
	return buf.Bytes()
}

// oneLineText returns s with runs of white space, line breaks included,
// made one space.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
