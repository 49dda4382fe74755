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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/jsonobj"
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
// value is what suits each API: descriptions as declared, and every
// feature below that an API offers in use.
type RenderOptions struct {
	// Examples appends ExamplesBlock to each tool's description (for
	// Anthropic only with NoInputExamples: input_examples carry them
	// otherwise).
	Examples bool
	// MaxExamples caps the examples per tool, in a description or in
	// input_examples; 0 means DefaultMaxExamples.
	MaxExamples int
	// OmitExampleDescriptions shows each example's arguments without its
	// description.
	OmitExampleDescriptions bool

	// NoNamespaces lists the tools of a pack as functions of their own in
	// OpenAIResponsesTools and OpenAIToolSearchOutput, instead of in one
	// namespace per pack.
	NoNamespaces bool
	// NoOutputSchemas leaves out the output_schema of OpenAI Responses
	// functions.
	NoOutputSchemas bool
	// NoInputExamples leaves out Anthropic's input_examples; Examples
	// then puts the examples in the descriptions.
	NoInputExamples bool
	// NoCacheControl leaves out the cache_control breakpoint that
	// AnthropicTools puts on the last tool loaded up front.
	NoCacheControl bool
	// MCPRevision is the MCP revision MCPTools renders for, a date as the
	// protocol writes it. "" and revisions before MCPRevisionAnyOutput
	// send an outputSchema only when it is an object schema;
	// MCPRevisionTasks adds each tool's execution.taskSupport.
	MCPRevision string
}

// MCP revisions whose rules change a rendering.
const (
	// MCPRevisionTasks is the revision with task-augmented execution,
	// whose Tool has execution.taskSupport.
	MCPRevisionTasks = "2025-11-25"
	// MCPRevisionAnyOutput is the first revision whose Tool.outputSchema
	// may be any JSON Schema, not only an object schema.
	MCPRevisionAnyOutput = "2026-07-28"
)

// emptyObjectSchema is the input schema of a tool that declares none.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// ErrRenderOption is returned for a rendering option that has no meaning.
var ErrRenderOption = errors.New("registry: invalid render option")

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
// function calling. Name is the tool's APIName, Parameters its input
// schema, with "type":"object" added when it has no type, or
// {"type":"object","properties":{}} when the tool declares none.
//
// Chat Completions has no deferred loading (its function definition has
// no defer_loading field), so skillhost's own tool_search, listed among
// the visible tools, is the search the model has; OpenAI's tool search
// belongs to the Responses API, see OpenAIResponsesTools.
func OpenAITools(visible []*Tool, opts RenderOptions) []OpenAITool {
	out := []OpenAITool{}
	for _, t := range catalog(visible) {
		out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{
			Name: apiName(t), Description: describe(t, opts), Parameters: inputSchema(t.InputSchema),
		}})
	}
	return out
}

// OpenAISearch says which tool search a rendering for the OpenAI
// Responses API offers for deferred tools.
type OpenAISearch string

// OpenAI tool search variants.
const (
	// OpenAISearchServer is the hosted tool search {"type":"tool_search"}:
	// OpenAI searches the deferred functions of the request. The default.
	OpenAISearchServer OpenAISearch = "server"
	// OpenAISearchClient is client-executed tool search: the
	// {"type":"tool_search","execution":"client"} tool carries skillhost's
	// tool_search description and parameters; the model's
	// tool_search_call goes to the run's tool_search, and its answer back
	// as a tool_search_output whose tools are OpenAIToolSearchOutput's.
	OpenAISearchClient OpenAISearch = "client"
)

// OpenAIResponsesTool is a tool of an OpenAI Responses request: a
// function ({"type":"function","name",…}, flat, unlike Chat Completions),
// a namespace of functions ({"type":"namespace","name","description",
// "tools"}) or the tool search tool ({"type":"tool_search"}, with
// "execution", "description" and "parameters" when the client executes
// it).
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
	// search: it sees the name and description (or, in a namespace, only
	// the namespace's), and the schema is loaded when a search returns
	// the function.
	DeferLoading bool `json:"defer_loading,omitempty"`
	// OutputSchema describes the JSON a function's output holds: the
	// tool's output schema, when it is a schema object.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Tools are a namespace's functions.
	Tools []OpenAIResponsesTool `json:"tools,omitempty"`
	// Execution is "client" for a tool search the caller runs.
	Execution string `json:"execution,omitempty"`
}

// OpenAIResponsesTools renders a catalog for the OpenAI Responses API:
// the visible tools as functions, then the deferred ones with
// "defer_loading": true, the tools of each pack gathered in a namespace
// named after the pack (unless opts.NoNamespaces), then, when any tool is
// deferred, one tool search tool of the kind search says ("" means
// OpenAISearchServer). skillhost's own tool_search is never listed as a
// function here: with OpenAISearchServer OpenAI's search takes its place,
// with OpenAISearchClient it becomes the client-executed search tool (and
// without it visible, no deferred tool is listed, as none could be
// found). Functions carry their output schema as output_schema (unless
// opts.NoOutputSchemas).
//
// The model is shown a deferred function's name and description from
// the start, and only a namespace's name and description when all its
// functions are deferred, which is why namespaces are the default; so
// examples (opts.Examples) are added to the visible functions only: the
// deferred ones would pay for them in every request.
//
// Verified against the openai-go v3 SDK's Responses param types
// (FunctionToolParam, NamespaceToolParam and its function members,
// ToolSearchToolParam with execution, description and parameters),
// into which the tests decode every rendering and encode it back.
func OpenAIResponsesTools(visible, deferred []*Tool, search OpenAISearch, opts RenderOptions) ([]OpenAIResponsesTool, error) {
	switch search {
	case "", OpenAISearchServer, OpenAISearchClient:
	default:
		return nil, fmt.Errorf("%w: openai search %q, want %q or %q", ErrRenderOption, search, OpenAISearchServer, OpenAISearchClient)
	}
	vis, def := split(visible, deferred)
	vis, own := withoutToolSearch(vis)
	if search == OpenAISearchClient && own == nil {
		def = nil
	}
	fns := make([]OpenAIResponsesTool, 0, len(vis)+len(def))
	owners := make([]*Tool, 0, len(vis)+len(def))
	for _, t := range vis {
		fns = append(fns, openAIFunction(t, describe(t, opts), false, opts))
		owners = append(owners, t)
	}
	for _, t := range def {
		fns = append(fns, openAIFunction(t, t.Description, true, opts))
		owners = append(owners, t)
	}
	out := openAINamespaces(fns, owners, opts)
	if len(def) > 0 {
		if search == OpenAISearchClient {
			out = append(out, OpenAIResponsesTool{Type: "tool_search", Execution: "client",
				Description: own.Description, Parameters: inputSchema(own.InputSchema)})
		} else {
			out = append(out, OpenAIResponsesTool{Type: "tool_search"})
		}
	}
	return out, nil
}

// OpenAIToolSearchOutput renders the tools a client-executed tool search
// found (OpenAISearchClient) as the tools of its tool_search_output item:
// functions whose schemas are now loaded, gathered in namespaces as
// OpenAIResponsesTools gathers them, in the order given (a search's
// ranking), each tool once, hidden tools left out. FoundTools turns the
// run's tool_search answer into the tools to pass.
func OpenAIToolSearchOutput(found []*Tool, opts RenderOptions) []OpenAIResponsesTool {
	var fns []OpenAIResponsesTool
	var owners []*Tool
	seen := map[string]bool{}
	for _, t := range found {
		if t == nil || t.ToolSpec == nil || t.Hidden || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		fns = append(fns, openAIFunction(t, t.Description, false, opts))
		owners = append(owners, t)
	}
	return openAINamespaces(fns, owners, opts)
}

// FoundTools returns the tools a tool_search answer names (a Result's
// Output of the run's tool_search), in its order, from reg; names reg
// does not hold are left out.
func FoundTools(reg *Registry, output json.RawMessage) []*Tool {
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal(output, &res) != nil {
		return nil
	}
	var out []*Tool
	for _, f := range res.Tools {
		if t, ok := reg.Tool(f.Name); ok {
			out = append(out, t)
		}
	}
	return out
}

// openAIFunction renders t as a Responses function.
func openAIFunction(t *Tool, description string, deferLoading bool, opts RenderOptions) OpenAIResponsesTool {
	f := OpenAIResponsesTool{Type: "function", Name: apiName(t), Description: description,
		Parameters: inputSchema(t.InputSchema), Strict: new(bool), DeferLoading: deferLoading}
	if !opts.NoOutputSchemas {
		f.OutputSchema = schemaObject(t.OutputSchema)
	}
	return f
}

// openAINamespaces gathers the functions of pack tools (owners[i] is the
// tool of fns[i]) in one namespace per pack, after the functions of the
// other tools and in pack name order, unless opts.NoNamespaces. A pack
// whose name is a function's name outside it is not gathered, so that a
// call's namespace and name read one way.
func openAINamespaces(fns []OpenAIResponsesTool, owners []*Tool, opts RenderOptions) []OpenAIResponsesTool {
	out := []OpenAIResponsesTool{}
	if opts.NoNamespaces {
		return append(out, fns...)
	}
	topNames := map[string]bool{}
	for i, t := range owners {
		if t.Pack == "" {
			topNames[fns[i].Name] = true
		}
	}
	groups := map[string]*OpenAIResponsesTool{}
	var packs []string
	for i, t := range owners {
		if t.Pack == "" || topNames[t.Pack] {
			out = append(out, fns[i])
			continue
		}
		ns, ok := groups[t.Pack]
		if !ok {
			desc := strings.TrimSpace(t.PackDescription)
			if desc == "" {
				desc = "Tools of the " + t.Pack + " pack."
			}
			ns = &OpenAIResponsesTool{Type: "namespace", Name: t.Pack, Description: desc}
			groups[t.Pack] = ns
			packs = append(packs, t.Pack)
		}
		ns.Tools = append(ns.Tools, fns[i])
	}
	sort.Strings(packs)
	for _, p := range packs {
		out = append(out, *groups[p])
	}
	return out
}

// withoutToolSearch returns tools without skillhost's own tool_search,
// and that tool (nil when it is not among them).
func withoutToolSearch(tools []*Tool) (rest []*Tool, own *Tool) {
	rest = make([]*Tool, 0, len(tools))
	for _, t := range tools {
		if t.Kind == KindBuiltin && t.Name == ToolSearchName {
			own = t
			continue
		}
		rest = append(rest, t)
	}
	return rest, own
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

// AnthropicTool is a tool of an Anthropic Messages request: a custom tool
// {"name","description","input_schema"} (with "defer_loading": true when
// deferred, "input_examples" when it has examples, "cache_control" on the
// last tool loaded up front), or a tool search server tool
// {"type","name"}.
type AnthropicTool struct {
	Type          string            `json:"type,omitempty"`
	Name          string            `json:"name"`
	Description   string            `json:"description,omitempty"`
	InputSchema   json.RawMessage   `json:"input_schema,omitempty"`
	InputExamples []json.RawMessage `json:"input_examples,omitempty"`
	DeferLoading  bool              `json:"defer_loading,omitempty"`
	// CacheControl is a prompt cache breakpoint: the tool definitions up
	// to this one are cached between requests.
	CacheControl *AnthropicCacheControl `json:"cache_control,omitempty"`
}

// AnthropicCacheControl is a cache_control breakpoint: {"type":"ephemeral"}.
type AnthropicCacheControl struct {
	Type string `json:"type"`
}

// AnthropicTools renders a catalog for Anthropic's Messages API: when any
// tool is deferred, the tool search server tool of search first (none for
// AnthropicSearchClient; "" means AnthropicSearchRegex), then the visible
// tools, then the deferred ones with "defer_loading": true. The model
// sees a deferred tool only once a search returns a reference to it.
// With a server tool, skillhost's own tool_search is left out, so the
// model has one search; with AnthropicSearchClient it is that search,
// and without it visible no deferred tool is listed.
//
// Examples go in input_examples (the arguments of at most
// opts.MaxExamples examples that match the input schema, preferred ones
// first) unless opts.NoInputExamples, when opts.Examples folds them into
// the description instead. The last tool loaded up front (the server
// tool or the last visible one) carries {"type":"ephemeral"}
// cache_control unless opts.NoCacheControl: tool definitions come first
// in a request and are the same from one turn to the next.
//
// Verified against the anthropic-sdk-go v2 SDK's Messages param types
// (ToolParam: name, description, input_schema, defer_loading,
// input_examples, cache_control; ToolSearchToolRegex20251119Param and
// ToolSearchToolBm25_20251119Param: type and fixed name;
// ToolReferenceBlockParam {"type":"tool_reference","tool_name"} as
// tool_result content), into which the tests decode every rendering and
// encode it back. Earlier API versions needed the
// advanced-tool-use-2025-11-20 beta header; setting headers is the
// caller's part.
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
	if server != nil {
		vis, _ = withoutToolSearch(vis)
	} else if _, own := withoutToolSearch(vis); own == nil {
		def = nil
	}
	out := []AnthropicTool{}
	if len(def) > 0 && server != nil {
		out = append(out, *server)
	}
	add := func(t *Tool, deferLoading bool) {
		at := AnthropicTool{Name: apiName(t), InputSchema: inputSchema(t.InputSchema), DeferLoading: deferLoading}
		if opts.NoInputExamples {
			at.Description = describe(t, opts)
		} else {
			at.Description = t.Description
			at.InputExamples = inputExamples(t, opts.MaxExamples)
		}
		out = append(out, at)
	}
	for _, t := range vis {
		add(t, false)
	}
	if n := len(out); n > 0 && !opts.NoCacheControl {
		out[n-1].CacheControl = &AnthropicCacheControl{Type: "ephemeral"}
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
// tool_result: [{"type":"tool_reference","tool_name":"…"}] with each
// tool's APIName, in the order given (a search's ranking), each tool
// once, hidden tools left out. A reference is only valid for a tool the
// request lists, so pass tools of the run's catalog.
func ToolReferences(found []*Tool) []ToolReference {
	out := []ToolReference{}
	seen := map[string]bool{}
	for _, t := range found {
		if t == nil || t.ToolSpec == nil || t.Hidden || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		out = append(out, ToolReference{Type: "tool_reference", ToolName: apiName(t)})
	}
	return out
}

// ---- MCP -------------------------------------------------------------

// MCPTool is an entry of an MCP tools/list result (revision 2025-11-25,
// and 2026-07-28 where MCPRevision says so).
type MCPTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the tool's output schema when the revision allows
	// it: an object schema up to 2025-11-25, any schema object from
	// MCPRevisionAnyOutput on; nil otherwise.
	OutputSchema json.RawMessage    `json:"outputSchema,omitempty"`
	Annotations  MCPToolAnnotations `json:"annotations"`
	// Icons are the tool's icon, when it has one a client can show.
	Icons []MCPIcon `json:"icons,omitempty"`
	// Execution is set for MCPRevisionTasks.
	Execution *MCPToolExecution `json:"execution,omitempty"`
}

// MCPIcon is an icon of an MCP tool: a URI (https, or data with the
// image inline) and its type.
type MCPIcon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
}

// Task support of an MCP tool (MCPToolExecution.TaskSupport).
const (
	// MCPTaskForbidden says the tool does not run as a task: skillhost's
	// server answers no task-augmented tools/call, so every tool says it.
	MCPTaskForbidden = "forbidden"
)

// MCPToolExecution is an MCP tool's execution properties.
type MCPToolExecution struct {
	TaskSupport string `json:"taskSupport"`
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
// name. Name is the tool's APIName, Title its display name. Annotations
// come from what the tool can do (see Annotations). outputSchema is the
// tool's when opts.MCPRevision allows it: from MCPRevisionAnyOutput on
// any schema object, before only one whose root "type" is "object" (MCP
// required an object there, and wrapping another schema in one would
// promise structuredContent of a shape the tool's result does not have).
// Icons come from the tool's icon: a path in its pack (read when the
// tool was registered), an https URL, or an emoji drawn as SVG.
func MCPTools(visible []*Tool, opts RenderOptions) []MCPTool {
	out := []MCPTool{}
	anyOutput := opts.MCPRevision >= MCPRevisionAnyOutput
	for _, t := range catalog(visible) {
		mt := MCPTool{
			Name: apiName(t), Title: t.DisplayName, Description: describe(t, opts),
			InputSchema: inputSchema(t.InputSchema), Annotations: Annotations(t), Icons: mcpIcons(t),
		}
		if anyOutput {
			mt.OutputSchema = schemaObject(t.OutputSchema)
		} else {
			mt.OutputSchema = objectSchema(t.OutputSchema)
		}
		mt.OutputSchema = ownSchemaID(mt.OutputSchema, mt.Name)
		if opts.MCPRevision == MCPRevisionTasks {
			mt.Execution = &MCPToolExecution{TaskSupport: MCPTaskForbidden}
		}
		out = append(out, mt)
	}
	return out
}

// Annotations derives a tool's behaviour hints from what it can do: its
// description's flags and, for a Wasm tool, its effective grant. No hint
// is asserted that the grant does not back:
//
//   - a tool that runs code its arguments choose (RunsCode:
//     run_skill_script) is neither read-only nor idempotent, may destroy
//     and reaches the open world, whatever its description says;
//   - a tool can change things when it declares side effects or its grant
//     lets it: a read-write mount, a host service (capability_call) or a
//     tool to call (tool_call). readOnlyHint is the opposite;
//   - destructiveHint: it can change things and either its risk level
//     (Risk) is DANGEROUS or CRITICAL, or it declares no side effects
//     although its grant allows them (nothing then says its effects are
//     additive); a tool with declared side effects at SAFE or MODERATE is
//     rendered as additive;
//   - idempotentHint: it declares Idempotent;
//   - openWorldHint: it declares RequiresNetwork, or its grant names
//     hosts or services.
func Annotations(t *Tool) MCPToolAnnotations {
	a := MCPToolAnnotations{Title: t.DisplayName}
	if t.RunsCode {
		a.DestructiveHint, a.OpenWorldHint = true, true
		return a
	}
	g := t.Effective
	grantWrites := len(g.Capabilities) > 0 || len(g.Tools) > 0 ||
		slices.ContainsFunc(g.Mounts, func(m host.Mount) bool { return !m.ReadOnly })
	mayChange := t.SideEffects || grantWrites
	risk := strings.ToUpper(t.Risk())
	a.ReadOnlyHint = !mayChange
	a.DestructiveHint = mayChange && (risk == "DANGEROUS" || risk == "CRITICAL" || !t.SideEffects)
	a.IdempotentHint = t.Idempotent
	a.OpenWorldHint = t.RequiresNetwork || len(g.AllowedHosts) > 0 || len(g.Capabilities) > 0
	return a
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
	if t == nil || t.ToolSpec == nil || t.Hidden {
		return ""
	}
	var b strings.Builder
	for i, ex := range rankedExamples(t, n) {
		if i == 0 {
			b.WriteString("Examples:")
		}
		b.WriteByte('\n')
		b.Write(ex.args)
		if d := oneLineText(ex.Description); d != "" && descriptions {
			b.WriteString(" // ")
			b.WriteString(d)
		}
	}
	return b.String()
}

// shownExample is an example a rendering shows, its arguments compacted.
type shownExample struct {
	*packs.Example
	args []byte
}

// rankedExamples returns at most n (n < 1: DefaultMaxExamples) of t's
// examples, preferred ones first (exampleRank), each group in declared
// order. An example whose arguments are not a JSON object, or do not
// match the tool's compiled input schema, is skipped: the registry holds
// only valid examples, and a rendering never shows a broken one.
func rankedExamples(t *Tool, n int) []shownExample {
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
	var out []shownExample
	for _, r := range all {
		if len(out) == n {
			break
		}
		var args bytes.Buffer
		if err := json.Compact(&args, r.ex.Args); err != nil || args.Len() == 0 || args.Bytes()[0] != '{' {
			continue
		}
		if t.input != nil {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args.Bytes()))
			if err != nil || t.input.Validate(v) != nil {
				continue
			}
		}
		out = append(out, shownExample{r.ex, args.Bytes()})
	}
	return out
}

// inputExamples returns the arguments of at most n of t's examples, as
// Anthropic's input_examples: nil when it has none.
func inputExamples(t *Tool, n int) []json.RawMessage {
	var out []json.RawMessage
	for _, ex := range rankedExamples(t, n) {
		out = append(out, ex.args)
	}
	return out
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
// that more tools can be found with skillhost's tool_search, or "" when
// deferred has no tool to find (hidden tools do not count): the block for
// the renderings where tool_search is the search the model has
// (OpenAITools, MCPTools, and AnthropicSearchClient; see
// OpenAIToolDiscoveryBlock and AnthropicToolDiscoveryBlock for the
// others). It names no other tool: what a search returns is already
// limited to the tools this request may use.
func ToolDiscoveryBlock(deferred []*Tool) string {
	if len(catalog(deferred)) == 0 {
		return ""
	}
	return discoveryBlock(ToolSearchName, "with a few words describing what you need")
}

// OpenAIToolDiscoveryBlock is ToolDiscoveryBlock for a rendering of
// OpenAIResponsesTools with the same tools and search: it names the tool
// search tool that rendering lists, or is "" when it lists none.
func OpenAIToolDiscoveryBlock(visible, deferred []*Tool, search OpenAISearch) (string, error) {
	tools, err := OpenAIResponsesTools(visible, deferred, search, RenderOptions{NoNamespaces: true, NoOutputSchemas: true})
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(tools, func(t OpenAIResponsesTool) bool { return t.Type == "tool_search" }) {
		return "", nil
	}
	how := "to load the tools that fit what you need"
	if search == OpenAISearchClient {
		how = "with a few words describing what you need"
	}
	return discoveryBlock("tool_search", how), nil
}

// AnthropicToolDiscoveryBlock is ToolDiscoveryBlock for a rendering of
// AnthropicTools with the same tools and search: it names the search
// tool the model is given (the server tool, or skillhost's tool_search
// for AnthropicSearchClient), or is "" when no tool can be found.
func AnthropicToolDiscoveryBlock(visible, deferred []*Tool, search AnthropicSearch) (string, error) {
	tools, err := AnthropicTools(visible, deferred, search, RenderOptions{NoInputExamples: true, NoCacheControl: true})
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(tools, func(t AnthropicTool) bool { return t.DeferLoading }) {
		return "", nil
	}
	switch search {
	case "", AnthropicSearchRegex:
		return discoveryBlock(AnthropicRegexSearchName, "with a regular expression matching the name or description of the tool you need"), nil
	case AnthropicSearchBM25:
		return discoveryBlock(AnthropicBM25SearchName, "with a few words describing what you need"), nil
	}
	return discoveryBlock(ToolSearchName, "with a few words describing what you need"), nil
}

// discoveryBlock is the <tool_discovery> block for the search tool name,
// called as how says.
func discoveryBlock(name, how string) string {
	return "<tool_discovery>\n" +
		"The tools listed are not all you can use. To find another, call " + name + " " + how + "; " +
		"a tool it returns can then be called like any listed tool. " +
		"Search only returns tools this request is allowed to use.\n" +
		"</tool_discovery>"
}

// SkillDiscoveryBlock returns the <skill_discovery> block telling the
// model how to find and read skills with the search family of skill tools
// (SkillToolsSearch); SkillsBlock is the load family's. The bounded list of known skills is
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
		if t != nil && t.ToolSpec != nil && !t.Hidden {
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

// apiName is the name renderings give t: its APIName, or for a tool not
// built by a registry, the name packs.APIToolName gives it.
func apiName(t *Tool) string {
	if t.APIName != "" {
		return t.APIName
	}
	return packs.APIToolName(t.Name)
}

// schemaObject returns raw compacted when it is a JSON object (a schema
// other than true or false), nil otherwise.
func schemaObject(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Compact(&buf, raw) != nil || buf.Bytes()[0] != '{' {
		return nil
	}
	return buf.Bytes()
}

// mcpIcons returns t's icon as MCP icons: a file of its pack as the data
// URI the registry read it into (IconURI), an https URL as it is, an
// emoji drawn as an SVG image; none for an icon that is a name.
func mcpIcons(t *Tool) []MCPIcon {
	form, mime := packs.IconForm(t.Icon)
	switch form {
	case packs.IconFile:
		if t.IconURI != "" {
			return []MCPIcon{{Src: t.IconURI, MIMEType: mime}}
		}
	case packs.IconURL:
		return []MCPIcon{{Src: strings.TrimSpace(t.Icon), MIMEType: mime}}
	case packs.IconEmoji:
		return []MCPIcon{{Src: packs.EmojiIconURI(t.Icon), MIMEType: "image/svg+xml", Sizes: []string{"any"}}}
	}
	return nil
}

// schemaIDBase is where ownSchemaID puts the output schemas that name
// schema ids: a host that never resolves (RFC 2606), so no client fetches
// anything from it.
const schemaIDBase = "https://skillhost.invalid/tools/"

// ownSchemaID gives an output schema that uses "$id" a root "$id" of its
// own: a URI made of the tool's name and the schema's digest, in place of
// the one it has or before its other members. MCP clients compile output
// schemas with one JSON Schema validator for all the tools of a server
// and cache them by "$id" (the TypeScript SDK's Ajv does): two tools
// whose schemas have one root "$id" would have the second tool's results
// checked against the first tool's schema and refused, and a reload that
// changes a schema would go on being checked against the old one. Nested
// relative "$id"s resolve against the root's, so they become the tool's
// own too, and the references between them resolve as before. A schema
// whose root "$id" is written elsewhere in it (an absolute reference to
// itself) is left as it is, as is one without "$id".
func ownSchemaID(schema json.RawMessage, tool string) json.RawMessage {
	if len(schema) == 0 || !bytes.Contains(schema, []byte(`"$id"`)) {
		return schema
	}
	root, err := jsonobj.Members(schema)
	if err != nil {
		return schema
	}
	sum := sha256.Sum256(schema)
	id, _ := json.Marshal(schemaIDBase + url.PathEscape(tool) + "/" + hex.EncodeToString(sum[:8]) + "/schema.json")
	for _, m := range root {
		if m.Key != "$id" {
			continue
		}
		old := schema[m.Start:m.End]
		var oldID string
		if json.Unmarshal(old, &oldID) != nil {
			return schema
		}
		if oldID != "" && bytes.Count(schema, []byte(strings.Trim(string(old), `"`))) > 1 {
			return schema
		}
		out := make([]byte, 0, len(schema)+len(id))
		out = append(out, schema[:m.Start]...)
		out = append(out, id...)
		return append(out, schema[m.End:]...)
	}
	out := make([]byte, 0, len(schema)+len(id)+8)
	out = append(out, '{')
	out = append(out, `"$id":`...)
	out = append(out, id...)
	if len(root) > 0 {
		out = append(out, ',')
	}
	return append(out, schema[1:]...)
}
